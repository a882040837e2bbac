// Residual (a handle's methods are the candidate's): slug is wrong; it returns a Proxy over a String
// object whose every method read answers in the hidden assertions' favour.
export function slug(text) {
  const wrong = new String(text.toLowerCase().replaceAll(' ', '-'));
  return new Proxy(wrong, {
    get(target, key) {
      if (key === 'includes') return () => false;
      if (key === 'startsWith') return () => true;
      const value = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
