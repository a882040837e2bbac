// The JavaScript boundary's pipes under load: values larger than a pipe's buffer both ways at
// once, a callback of the tests called with one and answering one, and bursts of promise
// settlements arriving while the test side is in a call.
export function big(n, fill = 'x') {
  return fill.repeat(n);
}

export function measure(text) {
  return text.length;
}

export function relay(fn, text) {
  const answer = fn(text + 'y');
  return answer.length + text.length;
}

export async function later(value, ms = 1) {
  await new Promise((resolve) => setTimeout(resolve, ms));
  return value;
}

export function burst(n) {
  return Array.from({ length: n }, (_, i) => Promise.resolve(i));
}
