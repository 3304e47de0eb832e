#!/usr/bin/python3
"""Issue 16 A3: a JPEG or PNG whose header claims more pixels than its bytes can hold is refused (exit 3, one
error line) before the pixels are allocated, under a 1 GiB address-space limit; a JPEG with missing data
(libjpeg's "premature end of data" warning) and a PNG with short or cut image data are refused, not decoded from
made-up pixels. Both for 'color' and 'shapes'.
usage: io_image_bounds.py VOXLABEL WORKDIR"""
import base64, os, resource, shutil, struct, subprocess, sys, zlib

from test_check import refusal_problem

voxlabel, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
# A 16x16 red baseline JPEG (PIL, quality 75).
TINY_JPEG = base64.b64decode('/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/2wBDAQkJCQwLDBgNDRgyIRwhMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjL/wAARCAAQABADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwDi6KKK+ZP3E//Z')


def jpeg_claiming(w, h):
    j = bytearray(TINY_JPEG)
    i = j.find(b'\xff\xc0')
    struct.pack_into('>HH', j, i + 5, h, w)
    return bytes(j)


def chunk(t, d):
    return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)


def png(w, h, rows=None, cut=0):
    raw = rows if rows is not None else b''.join(b'\0' + bytes((x * 7 + y) & 255 for x in range(w * 3))
                                                 for y in range(h))
    z = zlib.compress(raw)
    z = z[:len(z) - cut] if cut else z
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) +
            chunk(b'IDAT', z) + chunk(b'IEND', b''))


cases = {
    'tiny.jpg': (TINY_JPEG, 0),
    'jpeg_bomb.jpg': (jpeg_claiming(65500, 65500), 3),
    'jpeg_20k.jpg': (jpeg_claiming(20000, 20000), 3),
    'jpeg_2k_missing_data.jpg': (jpeg_claiming(2000, 2000), 3),
    'jpeg_cut.jpg': (TINY_JPEG[:len(TINY_JPEG) - 40], 3),
    'ok.png': (png(64, 48), 0),
    'png_bomb.png': (png(65000, 65000, rows=b'\0' * 10), 3),
    'png_cut.png': (png(64, 48, cut=200), 3),
    'png_short.png': (png(64, 48, rows=b''.join(b'\0' + b'\1' * 192 for _ in range(20))), 3),
}


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


failures = 0
for name, (data, want) in cases.items():
    path = os.path.join(work, name)
    open(path, 'wb').write(data)
    for command in ('color', 'shapes'):
        out = os.path.join(work, name + '.' + command)
        r = subprocess.run([voxlabel, command, path, '-o', out, '--force'], capture_output=True, text=True,
                           preexec_fn=limit, timeout=120)
        why = refusal_problem(r, want, out)
        if why:
            failures += 1
            print('FAIL %s %s: %s: %s' % (command, name, why, r.stderr.strip()))
print('%d failures in %d runs' % (failures, 2 * len(cases)))
sys.exit(1 if failures else 0)
