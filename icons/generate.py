#!/usr/bin/env python3
"""Draws Crosscheck's app icon and writes the PNGs (and an .ico) Tauri needs.

The mark: two overlapping check marks on a rounded square. Pure standard library: shapes are
signed distance functions, anti-aliased by distance, and the PNGs are written with zlib+struct.

    python3 icons/generate.py          # writes next to this file
"""

import math
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))

# Colours (RGB 0-255).
TOP = (52, 70, 130)
BOTTOM = (24, 32, 64)
BACK_CHECK = (60, 199, 181)
FRONT_CHECK = (255, 255, 255)

MARGIN = 0.035
RADIUS = 0.22
STROKE = 0.085
BACK = [(0.19, 0.50), (0.37, 0.68), (0.69, 0.30)]
FRONT = [(0.31, 0.58), (0.49, 0.76), (0.81, 0.38)]


def rounded_square(x, y):
    """Signed distance to the rounded square (negative inside)."""
    half = 0.5 - MARGIN
    qx = abs(x - 0.5) - (half - RADIUS)
    qy = abs(y - 0.5) - (half - RADIUS)
    outside = math.hypot(max(qx, 0.0), max(qy, 0.0))
    inside = min(max(qx, qy), 0.0)
    return outside + inside - RADIUS


def segment(x, y, a, b):
    ax, ay = a
    bx, by = b
    dx, dy = bx - ax, by - ay
    t = ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)
    t = max(0.0, min(1.0, t))
    return math.hypot(x - (ax + t * dx), y - (ay + t * dy))


def polyline(x, y, points, width):
    d = min(segment(x, y, points[i], points[i + 1]) for i in range(len(points) - 1))
    return d - width / 2


def coverage(distance, pixel):
    """Anti-aliased coverage from a signed distance (in units of the image)."""
    return max(0.0, min(1.0, 0.5 - distance / pixel))


def over(dst, src, alpha):
    """Source-over blend of an opaque colour with coverage `alpha` onto premultiplied RGBA."""
    r, g, b, a = dst
    return (
        src[0] * alpha + r * (1 - alpha),
        src[1] * alpha + g * (1 - alpha),
        src[2] * alpha + b * (1 - alpha),
        alpha + a * (1 - alpha),
    )


def render(size):
    pixel = 1.0 / size
    rows = []
    shadow_offset = 0.018
    for py in range(size):
        row = bytearray()
        y = (py + 0.5) * pixel
        mix = y
        bg = tuple(TOP[i] * (1 - mix) + BOTTOM[i] * mix for i in range(3))
        for px in range(size):
            x = (px + 0.5) * pixel
            base = coverage(rounded_square(x, y), pixel)
            color = (0.0, 0.0, 0.0, 0.0)
            if base > 0:
                color = over(color, bg, base)
                # Soft shadow of the front check on the back one keeps the overlap readable.
                shade = coverage(polyline(x - shadow_offset, y - shadow_offset, FRONT, STROKE * 1.25), pixel * 3) * 0.35
                back = coverage(polyline(x, y, BACK, STROKE), pixel) * base
                front = coverage(polyline(x, y, FRONT, STROKE), pixel) * base
                color = over(color, BACK_CHECK, back)
                color = over(color, (0, 0, 0), shade * base * (1 - front))
                color = over(color, FRONT_CHECK, front)
            r, g, b, a = color
            if a > 0:
                row += bytes((round(r / a), round(g / a), round(b / a), round(a * 255)))
            else:
                row += b"\x00\x00\x00\x00"
        rows.append(bytes(row))
    return rows


def png(rows, size):
    raw = b"".join(b"\x00" + row for row in rows)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def ico(images):
    """An .ico whose entries are PNGs (supported since Windows Vista)."""
    head = struct.pack("<HHH", 0, 1, len(images))
    offset = len(head) + 16 * len(images)
    entries = b""
    blobs = b""
    for size, data in images:
        dim = 0 if size >= 256 else size
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(data), offset + len(blobs))
        blobs += data
    return head + entries + blobs


def main():
    outputs = {
        "32x32.png": 32,
        "128x128.png": 128,
        "128x128@2x.png": 256,
        "icon.png": 512,
    }
    cache = {}
    for name, size in outputs.items():
        data = png(render(size), size)
        cache[size] = data
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
        print(f"wrote icons/{name} ({size}x{size})")
    with open(os.path.join(HERE, "icon.ico"), "wb") as f:
        f.write(ico([(32, cache[32]), (128, cache[128]), (256, cache[256])]))
    print("wrote icons/icon.ico")


if __name__ == "__main__":
    main()
