import { describe, expect, it } from 'vitest';
import {
  canManageUsers, disablePatch, disableQuestion, EMPTY_USER_FORM, newUserBody, passwordPatch, sortUsers, userActions,
} from '../../src/userForm';
import type { Me, User } from '../../src/types';

const admin: Me = { kind: 'user', id: 'usr_admin', username: 'admin', role: 'admin' };
const member: Me = { kind: 'user', id: 'usr_m', username: 'mia', role: 'member' };
const user = (over: Partial<User> = {}): User => ({ id: 'usr_1', username: 'ada', role: 'member', disabled: false, created_at: '2026-01-01T00:00:00Z', ...over });

describe('who manages users', () => {
  it('is admins only', () => {
    expect(canManageUsers(admin)).toBe(true);
    for (const me of [member, { ...member, role: 'viewer' as const }, { kind: 'worker' } as unknown as Me, null, undefined]) expect(canManageUsers(me)).toBe(false);
  });
});

describe('new user body', () => {
  it('sends the trimmed name and the role, and no password when none is typed', () => {
    const { body, errors } = newUserBody({ ...EMPTY_USER_FORM, username: '  ada ', role: 'viewer' });
    expect(body).toEqual({ username: 'ada', role: 'viewer' });
    expect('password' in body).toBe(false);
    expect(errors).toEqual([]);
  });
  it('sends the password as typed when both fields agree', () => {
    const { body, errors } = newUserBody({ username: 'ada', role: 'admin', password: ' secret pw ', password_again: ' secret pw ' });
    expect(body).toEqual({ username: 'ada', role: 'admin', password: ' secret pw ' });
    expect(errors).toEqual([]);
  });
  it('refuses two different passwords, and a repeat without a password', () => {
    expect(newUserBody({ username: 'ada', role: 'member', password: 'secret-1', password_again: 'secret-2' }).errors)
      .toEqual([{ field: 'password_again', message: 'does not match the password' }]);
    expect(newUserBody({ username: 'ada', role: 'member', password: '', password_again: 'x' }).errors.map((e) => e.field)).toEqual(['password_again']);
  });
  it('leaves names and lengths to the server', () => {
    expect(newUserBody({ username: 'bad name!', role: 'member', password: 'short', password_again: 'short' }).errors).toEqual([]);
  });
});

describe('new password', () => {
  it('is the PATCH of the password only', () => {
    expect(passwordPatch('new secret', 'new secret')).toEqual({ patch: { password: 'new secret' }, errors: [] });
  });
  it('needs a password, typed twice the same', () => {
    expect(passwordPatch('', '')).toEqual({ patch: {}, errors: [{ field: 'password', message: 'is required' }] });
    expect(passwordPatch('new secret', 'new secrex')).toEqual({ patch: {}, errors: [{ field: 'password_again', message: 'does not match the password' }] });
  });
});

describe('row actions', () => {
  it('lets an admin change anyone else', () => {
    expect(userActions(admin, user())).toEqual({ self: false, changeRole: true, toggleDisabled: true });
  });
  it("keeps an admin's own role and state fixed, as the server does (409)", () => {
    const a = userActions(admin, user({ id: 'usr_admin', username: 'admin', role: 'admin' }));
    expect(a.self).toBe(true);
    expect(a.changeRole).toBe(false);
    expect(a.toggleDisabled).toBe(false);
    expect(a.why).toContain('your own account');
  });
  it('offers nothing to non-admins', () => {
    expect(userActions(member, user())).toMatchObject({ changeRole: false, toggleDisabled: false });
  });
  it('flips disabled, asking before a disable only', () => {
    expect(disablePatch(user())).toEqual({ disabled: true });
    expect(disablePatch(user({ disabled: true }))).toEqual({ disabled: false });
    expect(disableQuestion(user())).toContain('Disable ada?');
    expect(disableQuestion(user({ disabled: true }))).toBeNull();
  });
  it('sorts admins, members, viewers, then by name', () => {
    const list = [user({ id: '1', username: 'zed', role: 'viewer' }), user({ id: '2', username: 'bob' }), user({ id: '3', username: 'root', role: 'admin' }), user({ id: '4', username: 'amy' })];
    expect(sortUsers(list).map((u) => u.username)).toEqual(['root', 'amy', 'bob', 'zed']);
    expect(list[0].username).toBe('zed');
  });
});
