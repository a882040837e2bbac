"""Shopping-cart totals in cents: quantity discounts, a coupon, then tax."""


def line_total(price: int, quantity: int) -> int:
    """10% off a line of 10 or more items (rounded down to the cent)."""
    if quantity < 0 or price < 0:
        raise ValueError("price and quantity must not be negative")
    total = price * quantity
    if quantity >= 10:
        total -= total // 10
    return total


def cart_total(lines: list[tuple[int, int]], coupon: int = 0, tax_percent: int = 0) -> int:
    subtotal = sum(line_total(price, qty) for price, qty in lines)
    discounted = max(subtotal - coupon, 0)
    return discounted + (discounted * tax_percent + 50) // 100
