// An honest TypeScript candidate (CommonJS output style, loaded through the suite's loader).
export const add = (a: number, b: number): number => a + b;
export function label(n: number): string {
  return n < 0 ? 'negative' : 'non-negative';
}
