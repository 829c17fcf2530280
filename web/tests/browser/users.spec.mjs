// Users through the dashboard: an admin creates, re-roles, disables and re-enables users and sets
// passwords; members and viewers see only what their role allows.
import { test, assert, refusal, statusWithToken, statusOfLogin, fieldMessage, waitForText, until } from './fixtures.mjs';

test('an admin creates a user on /users; a name the server refuses shows its error by the field', async ({ page, podium, signIn, shot }) => {
  await signIn(podium.token);
  await page.click('nav.top a[href="/users"]');
  await page.waitForSelector('[data-test=users-table] tr[data-user=admin]');
  await page.click('button:has-text("New user")');
  const form = '[data-test=user-form]';
  await page.fill(`${form} input[name=username]`, 'web ada!');
  await page.click(`${form} button[type=submit]`);
  const server = await refusal(podium, 'POST', '/api/v1/users', { username: 'web ada!', role: 'member' });
  const field = (server.errors ?? []).find((e) => e.field === 'username');
  assert(field, `the server names the username: ${JSON.stringify(server)}`);
  await waitForText(page, fieldMessage(form, 'username'), field.message);
  assert((await page.textContent(`${form} .error-box`)).includes(String(server.status)), 'the status is shown');
  // Two different passwords are refused before anything is sent.
  await page.fill(`${form} input[name=username]`, 'web-ada');
  await page.selectOption(`${form} select[name=role]`, 'viewer');
  await page.fill(`${form} input[name=password]`, 'correct-horse-1');
  await page.fill(`${form} input[name=password_again]`, 'correct-horse-2');
  await page.waitForSelector(`${fieldMessage(form, 'password_again')}:has-text("does not match")`);
  assert(await page.isDisabled(`${form} button[type=submit]`), 'create is disabled while the passwords differ');
  await page.fill(`${form} input[name=password_again]`, 'correct-horse-1');
  await shot('user-new');
  await page.click(`${form} button[type=submit]`);
  await page.waitForSelector('[data-test=user-token]');
  const token = (await page.textContent('[data-test=user-token]')).trim();
  assert(token.startsWith('pdm_'), `the first API token is shown: ${token}`);
  await page.waitForSelector('[data-test=users-table] tr[data-user=web-ada]');
  assert(await page.inputValue('tr[data-user=web-ada] select[name=role]') === 'viewer', 'the row shows the role');
  const u = await podium.call('GET', '/api/v1/users/web-ada');
  assert(u.role === 'viewer' && u.disabled === false, `stored ${JSON.stringify(u)}`);
  assert(!(await podium.call('GET', '/api/v1/users')).items.some((x) => x.username === 'web ada!'), 'the refused name was not created');
  assert(await statusWithToken(podium, token) === 200, 'the shown token works');
  assert(await statusOfLogin(podium, 'web-ada', 'correct-horse-1') === 200, 'the password signs in');
  // The admin's own row cannot demote or disable itself (the server would answer 409).
  assert(await page.isDisabled('tr[data-user=admin] select[name=role]'), 'own role fixed');
  assert(await page.isDisabled('tr[data-user=admin] [data-test=toggle-disabled]'), 'own account cannot be disabled');
  await shot('users');
});

test("an admin changes a user's role, disables them (token and password refused), enables them and sets a password", async ({ page, podium, asAdmin, shot }) => {
  await asAdmin();
  // A viewer with a password and a first API token, as the user form makes one.
  const { token } = await podium.call('POST', '/api/v1/users', { username: 'web-bea', role: 'viewer', password: 'correct-horse-1' });
  await page.goto(`${podium.base}/users`);
  const row = 'tr[data-user=web-bea]';
  await page.waitForSelector(row);
  await page.selectOption(`${row} select[name=role]`, 'member');
  await until(page, 'the role to be member', async () => (await podium.call('GET', '/api/v1/users/web-bea')).role === 'member');
  await page.reload();
  await page.waitForSelector(row);
  assert(await page.inputValue(`${row} select[name=role]`) === 'member', 'the new role after a reload');
  assert((await (await fetch(`${podium.base}/api/v1/auth/me`, { headers: { Authorization: `Bearer ${token}` } })).json()).role === 'member', 'the token carries the new role');

  await page.click(`${row} [data-test=toggle-disabled]`);
  await page.waitForSelector(`${row} td[data-key=state]:has-text("disabled")`);
  assert((await podium.call('GET', '/api/v1/users/web-bea')).disabled === true, 'disabled on the server');
  assert(await statusWithToken(podium, token) === 401, 'the disabled user\u2019s token is refused');
  assert(await statusOfLogin(podium, 'web-bea', 'correct-horse-1') === 401, 'the disabled user\u2019s sign-in is refused');
  await shot('users-disabled');

  await page.click(`${row} [data-test=toggle-disabled]:has-text("Enable")`);
  await page.waitForSelector(`${row} td[data-key=state]:has-text("active")`);
  assert(await statusWithToken(podium, token) === 200, 'enabled again: the token works');

  await page.click(`${row} [data-test=set-password]`);
  const pw = '[data-test=password-form]';
  await page.fill(`${pw} input[name=new_password]`, 'battery-staple-3');
  await page.fill(`${pw} input[name=new_password_again]`, 'battery-staple-3');
  await page.click(`${pw} button[type=submit]`);
  await page.waitForSelector(pw, { state: 'detached' });
  assert(await statusOfLogin(podium, 'web-bea', 'battery-staple-3') === 200, 'the new password signs in');
  assert(await statusOfLogin(podium, 'web-bea', 'correct-horse-1') === 401, 'the old one no longer does');
});

test('a member sees no Users link or admin forms; registers and deletes only their own datasets; a viewer only reads', async ({ page, podium, signIn, signOut, shot }) => {
  const member = await podium.call('POST', '/api/v1/users', { username: 'web-member-2', role: 'member' });
  await signIn(member.token);
  assert(await page.locator('nav.top a[href="/users"]').count() === 0, 'no Users link for a member');
  await page.goto(`${podium.base}/users`);
  await page.waitForSelector('[data-test=users-forbidden]');
  assert(await page.locator('[data-test=users-table], [data-test=user-form]').count() === 0, 'no user list or form');
  await shot('users-member');
  await page.goto(`${podium.base}/clusters/web`);
  await page.waitForSelector('[data-test=launch-policy]');
  assert(await page.locator('[data-test=worker-tokens]').count() === 0, 'no worker tokens section');
  await page.goto(`${podium.base}/datasets`);
  await page.waitForSelector('tr[data-dataset=web-text]');
  assert(await page.locator('tr[data-dataset=web-text] [data-test=delete-dataset]').count() === 0, "no Delete on the admin's dataset");
  await page.click('button:has-text("Register dataset")');
  const form = '[data-test=dataset-form]';
  await page.fill(`${form} input[name=name]`, 'web-member-ds');
  await page.fill(`${form} input[name=uri]`, 'gs://web-bucket/member/');
  await page.fill(`${form} input[name=tokens]`, '5000');
  await page.click(`${form} button[type=submit]`);
  await page.waitForSelector('tr[data-dataset=web-member-ds] [data-test=delete-dataset]');
  assert((await podium.call('GET', '/api/v1/datasets/web-member-ds')).created_by === member.id, 'registered as the member');
  await page.click('tr[data-dataset=web-member-ds] [data-test=delete-dataset]');
  await page.waitForSelector('tr[data-dataset=web-member-ds]', { state: 'detached' });
  assert(await statusWithToken(podium, podium.token, '/api/v1/datasets/web-member-ds') === 404, 'the member deleted their own dataset');
  await signOut();

  const viewer = await podium.call('POST', '/api/v1/users', { username: 'web-viewer', role: 'viewer' });
  await signIn(viewer.token);
  await page.goto(`${podium.base}/datasets`);
  await page.waitForSelector('tr[data-dataset=web-text]');
  assert(await page.locator('button:has-text("Register dataset"), [data-test=delete-dataset]').count() === 0, 'a viewer only reads');
  assert(await page.locator('nav.top a[href="/users"]').count() === 0, 'no Users link for a viewer');
  await signOut();
});
