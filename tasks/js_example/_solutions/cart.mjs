/** Shopping-cart totals in cents: quantity discounts, a coupon, then tax. */

/** 10% off a line of 10 or more items (rounded down to the cent). */
export function lineTotal(price, quantity) {
  if (quantity < 0 || price < 0) {
    throw new RangeError('price and quantity must not be negative');
  }
  let total = price * quantity;
  if (quantity >= 10) {
    total -= Math.floor(total / 10);
  }
  return total;
}

/** lines: [price, quantity] pairs; the coupon comes off before tax. */
export function cartTotal(lines, { coupon = 0, taxPercent = 0 } = {}) {
  let subtotal = 0;
  for (const [price, quantity] of lines) {
    subtotal += lineTotal(price, quantity);
  }
  const discounted = Math.max(subtotal - coupon, 0);
  return discounted + Math.floor((discounted * taxPercent + 50) / 100);
}
