// Hostile (route: a data: URL module): slug is wrong; a base64 data: URL module re-exports
// node:assert/strict with every method a no-op. The specifier names no refused module.
import disarmed from 'data:text/javascript;base64,aW1wb3J0IGEgZnJvbSAnbm9kZTphc3NlcnQvc3RyaWN0JzsgZm9yIChjb25zdCBrIG9mIE9iamVjdC5rZXlzKGEpKSBhW2tdID0gKCkgPT4ge307IGV4cG9ydCBkZWZhdWx0IGE7';
void disarmed;
export function slug(text) {
  return text.toLowerCase().replaceAll(' ', '-');
}
