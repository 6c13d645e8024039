"""Counts the pixels of one colour on an Xvfb screen dumped with -fbdir (an XWD file), and the
box they span: python3 xwd_colour.py FILE RRGGBB [TOLERANCE [X0,Y0,X1,Y1]] prints "COUNT X0 Y0
X1 Y1" (COUNT 0 and no box when there are none); with a region, only the pixels within it
(inclusive) are counted. Xvfb keeps the file current as the screen changes."""
import struct
import sys

path, colour = sys.argv[1], int(sys.argv[2], 16)
tolerance = int(sys.argv[3]) if len(sys.argv) > 3 else 0
region = [int(v) for v in sys.argv[4].split(",")] if len(sys.argv) > 4 else None
data = open(path, "rb").read()
fields = struct.unpack(">25I", data[:100])
header_size, width, height = fields[0], fields[4], fields[5]
byte_order, bits_per_pixel, bytes_per_line, ncolors = fields[7], fields[11], fields[12], fields[19]
if bits_per_pixel != 32:
    sys.exit("only 32-bit XWD dumps are read, not %d-bit" % bits_per_pixel)
start = header_size + ncolors * 12
want = ((colour >> 16) & 255, (colour >> 8) & 255, colour & 255)
count, box = 0, None
order = "<I" if byte_order == 0 else ">I"
rx0, ry0, rx1, ry1 = region or (0, 0, width - 1, height - 1)
for y in range(max(0, ry0), min(height, ry1 + 1)):
    row = data[start + y * bytes_per_line : start + y * bytes_per_line + width * 4]
    for x in range(max(0, rx0), min(width, rx1 + 1)):
        (p,) = struct.unpack_from(order, row, x * 4)
        r, g, b = (p >> 16) & 255, (p >> 8) & 255, p & 255
        if abs(r - want[0]) <= tolerance and abs(g - want[1]) <= tolerance and abs(b - want[2]) <= tolerance:
            count += 1
            box = (min(box[0], x), min(box[1], y), max(box[2], x), max(box[3], y)) if box else (x, y, x, y)
print(count, *(box or ()))
