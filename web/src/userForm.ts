// The users page (admins): a new user's POST body, a new password's PATCH, and what the signed-in
// admin may do to each row. The server judges names and password lengths (its problem+json is
// shown by field); these functions refuse only what it cannot see: a password typed twice
// differently.
import type { FieldError } from './spec';
import type { Me, Role, User, UserCreate, UserPatch } from './types';

export const ROLES: Role[] = ['admin', 'member', 'viewer'];

export const ROLE_HELP: Record<Role, string> = {
  admin: 'everything, users and clusters included',
  member: 'submits and manages own runs and datasets',
  viewer: 'reads only',
};

/** Listing, creating and changing users is for admins (x-podium-access: admin). */
export function canManageUsers(me: Me | null | undefined): boolean {
  return me?.role === 'admin';
}

export interface NewUserForm { username: string; role: Role; password: string; password_again: string }

export const EMPTY_USER_FORM: NewUserForm = { username: '', role: 'member', password: '', password_again: '' };

function checkRepeat(password: string, again: string, errors: FieldError[]) {
  if (password !== again) errors.push({ field: 'password_again', message: 'does not match the password' });
}

/**
 * POST /users: the username (trimmed) and role, and the password only when one is given:
 * without it the user works with API tokens only and cannot sign in to the dashboard.
 * A password is sent as typed (spaces are characters of it).
 */
export function newUserBody(form: NewUserForm): { body: UserCreate; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const body: UserCreate = { username: form.username.trim(), role: form.role };
  if (form.password !== '' || form.password_again !== '') {
    checkRepeat(form.password, form.password_again, errors);
    body.password = form.password;
  }
  return { body, errors };
}

/** PATCH /users/{id} with a new password; an empty one is refused here (it would change nothing). */
export function passwordPatch(password: string, again: string): { patch: UserPatch; errors: FieldError[] } {
  const errors: FieldError[] = [];
  if (password === '') errors.push({ field: 'password', message: 'is required' });
  else checkRepeat(password, again, errors);
  return { patch: errors.length ? {} : { password }, errors };
}

export interface UserActions {
  /** the row is the signed-in admin's own */
  self: boolean;
  changeRole: boolean;
  toggleDisabled: boolean;
  /** why a control is off, for its title */
  why?: string;
}

/** The server refuses (409) an admin demoting or disabling their own account: those controls are off. */
export function userActions(me: Me | null | undefined, user: User): UserActions {
  if (!canManageUsers(me)) return { self: false, changeRole: false, toggleDisabled: false, why: 'only admins change users' };
  const self = !!me?.id && me.id === user.id;
  if (self) return { self, changeRole: false, toggleDisabled: false, why: 'you cannot demote or disable your own account' };
  return { self, changeRole: true, toggleDisabled: true };
}

/** The PATCH that flips a user between active and disabled. */
export function disablePatch(user: User): UserPatch {
  return { disabled: !user.disabled };
}

/** The confirmation a disable (not an enable) asks for. */
export function disableQuestion(user: User): string | null {
  if (user.disabled) return null;
  return `Disable ${user.username}? Their dashboard sessions end at once and their API tokens stop working until you enable the account again.`;
}

/** Admins first, then members, then viewers; by name within a role. */
export function sortUsers(users: User[]): User[] {
  return [...users].sort((a, b) => ROLES.indexOf(a.role) - ROLES.indexOf(b.role) || a.username.localeCompare(b.username));
}
