# orders.py - order desk for the old storefront platform.
# Entry point: dispatch(action, payload) -> (http_status, dict)
# Money is in cents. Do not change TAX_RATE without talking to finance!!
import time

ORDERS = {}
NEXT_ID = [1]

TAX_RATE = 0.08
SHIPPING_FEE = 799
FREE_SHIPPING_FROM = 10000   # cents, after discount
MAX_LINES = 20
MAX_QTY = 100
# code -> (kind, amount, minimum subtotal in cents)
COUPONS = {
    "SAVE10": ("percent", 10, 5000),
    "FLAT5": ("flat", 500, 2000),
}


def money(cents):
    return "$%d.%02d" % (cents // 100, cents % 100)


def price(items, coupon):
    subtotal = 0
    for it in items:
        subtotal = subtotal + it["qty"] * it["unit_price"]
    discount = 0
    if coupon:
        if coupon not in COUPONS:
            raise Exception("unknown coupon %s" % coupon)
        kind, amount, minimum = COUPONS[coupon]
        if subtotal >= minimum:
            if kind == "percent":
                discount = subtotal * amount // 100
            else:
                discount = min(amount, subtotal)
    taxable = subtotal - discount
    tax = int(taxable * TAX_RATE + 0.5)
    if taxable >= FREE_SHIPPING_FROM:
        shipping = 0
    else:
        shipping = SHIPPING_FEE
    return subtotal, discount, tax, shipping, taxable + tax + shipping


def check_items(items):
    if not items:
        raise Exception("order has no items")
    if len(items) > MAX_LINES:
        raise Exception("too many lines (max %d)" % MAX_LINES)
    seen = []
    for it in items:
        if not it.get("sku"):
            raise Exception("line without sku")
        if it["sku"] in seen:
            raise Exception("duplicate sku %s" % it["sku"])
        seen.append(it["sku"])
        if it["qty"] < 1 or it["qty"] > MAX_QTY:
            raise Exception("bad qty for %s" % it["sku"])
        if it["unit_price"] <= 0:
            raise Exception("bad price for %s" % it["sku"])


def create(payload):
    items = payload["items"]
    check_items(items)
    subtotal, discount, tax, shipping, total = price(items, payload.get("coupon"))
    oid = "ord-%04d" % NEXT_ID[0]
    NEXT_ID[0] += 1
    ORDERS[oid] = {"id": oid, "customer_id": payload["customer_id"], "status": "pending",
                   "items": items, "subtotal": subtotal, "discount": discount, "tax": tax,
                   "shipping": shipping, "total": total, "created": time.time()}
    print("created order %s for %s total %s" % (oid, payload["customer_id"], money(total)))
    return ORDERS[oid]


def find(oid):
    if oid not in ORDERS:
        raise Exception("not found: %s" % oid)
    return ORDERS[oid]


def pay(payload):
    o = find(payload["order_id"])
    if o["status"] != "pending":
        raise Exception("bad state: order is %s" % o["status"])
    o["status"] = "paid"
    print("order %s paid %s" % (o["id"], money(o["total"])))
    return o


def ship(payload):
    o = find(payload["order_id"])
    if o["status"] != "paid":
        raise Exception("bad state: order is %s" % o["status"])
    o["status"] = "shipped"
    return o


def cancel(payload):
    o = find(payload["order_id"])
    if o["status"] == "shipped" or o["status"] == "cancelled":
        raise Exception("bad state: order is %s" % o["status"])
    if o["status"] == "paid":
        o["refund"] = o["total"]
    else:
        o["refund"] = 0
    o["status"] = "cancelled"
    print("order %s cancelled, refund %s" % (o["id"], money(o["refund"])))
    return o


def receipt(payload):
    o = find(payload["order_id"])
    count = 0
    for it in o["items"]:
        count += it["qty"]
    return {"order_id": o["id"],
            "text": "Order %s for %s: %d item(s), total %s" % (o["id"], o["customer_id"], count, money(o["total"]))}


ACTIONS = {"create": create, "pay": pay, "ship": ship, "cancel": cancel, "receipt": receipt,
           "get": lambda p: find(p["order_id"])}


def dispatch(action, payload):
    if action not in ACTIONS:
        return 404, {"error": "no such action"}
    try:
        result = ACTIONS[action](payload)
    except Exception as e:
        msg = str(e)
        if msg.startswith("not found"):
            return 404, {"error": msg}
        if msg.startswith("bad state"):
            return 409, {"error": msg}
        return 400, {"error": msg}
    if action == "create":
        return 201, result
    return 200, result
