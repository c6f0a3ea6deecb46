#!/usr/bin/env python3
"""Writes the seed corpora of the frame, dgram, envelope, auth and join fuzz
targets.

usage: tests/fuzz/gen-corpus.py [CORPUS_DIR]   (default: next to this file)

The files are committed; rerun this after changing the formats.  Envelopes
are protobuf written by hand (varints, zigzag, length-delimited fields) so
the script needs nothing but Python 3.
"""
import os
import struct
import sys


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zigzag(v):
    return ((v << 1) ^ (v >> 31)) & 0xFFFFFFFF


def fv(num, v):
    """A varint field."""
    return varint(num << 3) + varint(v)


def fs(num, data):
    """A length-delimited field."""
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def f64(num, v):
    return varint(num << 3 | 1) + struct.pack("<d", v)


# Kinds used below (proto/colls.proto).
ATTACH_REQ, ATTACH_REP, DATA, SEND_FAILED = 100, 101, 200, 204
HOSTS_REP, ERROR, HOST_TABLE, HEARTBEAT = 502, 599, 601, 602


def env(version=1, kind=DATA, src=0, dst=0, tag=0, group="", seq=0,
        dtype=0, count=0, encoding=0, byte_order=0, flags=0, req_id=0,
        status=0, route=0, body=b""):
    out = b""
    for num, v in ((1, version), (2, kind), (3, src), (4, dst)):
        if v:
            out += fv(num, v)
    if tag:
        out += fv(5, zigzag(tag))
    if group:
        out += fs(6, group)
    for num, v in ((7, seq), (8, dtype), (9, count), (10, encoding),
                   (11, byte_order), (12, flags), (13, req_id)):
        if v:
            out += fv(num, v)
    if status:
        out += fv(14, zigzag(status))
    if route:
        out += fv(15, route)
    return out + body


def host_entry(hid, name, addr, rtt):
    return (fv(1, hid) + fv(3, 0x1234) + fs(4, name) + fs(5, addr) +
            fv(6, 2) + f64(7, rtt))


ENVELOPES = {
    "data": env(kind=DATA, src=0x100001, dst=0x200001, tag=7, encoding=1,
                byte_order=0, req_id=1),
    "data-typed": env(kind=DATA, src=0x100001, dst=0x200001, tag=-3,
                      dtype=10, count=4, flags=1, route=1),
    "attach-req": env(kind=ATTACH_REQ, body=fs(20, fv(1, 1) + fv(2, 4242) +
                                               fs(3, "ring") + fv(4, 1))),
    "attach-rep": env(kind=ATTACH_REP, body=fs(
        21, fv(1, 0x100003) + fv(2, 1) + fv(3, 99) + fv(4, 256 << 20) +
        fs(5, "127.0.0.1"))),
    "send-failed": env(kind=SEND_FAILED, dst=0x300001, status=-4002,
                       req_id=12),
    "host-table": env(kind=HOST_TABLE, body=fs(24, fv(1, 3) + fs(
        2, host_entry(1, "a", "10.0.0.1:7000", 0.0)) + fs(
        2, host_entry(2, "b", "10.0.0.2:7000", 81.5)))),
    "error": env(kind=ERROR, status=-71, body=fs(29, fs(1, "bad frame"))),
    "heartbeat": env(kind=HEARTBEAT, src=0x100000,
                     body=fs(31, fv(1, 5) + fv(2, 3))),
    "group": env(kind=300, group="workers", seq=17, dtype=3, count=1000),
    # Edge cases.
    "unknown-field": env(kind=DATA) + fv(99, 7) + fs(100, "future"),
    "unknown-kind": env(kind=12345),
    "negative-kind": env() + fv(2, (1 << 64) - 1),
    "version-2": env(version=2, kind=DATA),
    "no-version": env(version=0, kind=DATA),
    "bad-dtype": env(dtype=11),
    "bad-encoding": env(encoding=3),
    "bad-order": env(byte_order=2),
    "two-bodies": env(kind=HEARTBEAT, body=fs(31, fv(1, 1)) +
                  fs(29, fs(1, "x"))),
    "nul-in-group": env(group="a\0b"),
    "truncated": env(kind=DATA, group="truncated")[:-3],
    "long-varint": b"\x08" + b"\x81" * 10 + b"\x01",
}


def frame(e, payload=b""):
    return struct.pack(">II", 4 + len(e) + len(payload), len(e)) + e + payload


FRAMES = {
    "data": frame(ENVELOPES["data"], b"hello, world"),
    "attach": frame(ENVELOPES["attach-req"]),
    "two-frames": frame(ENVELOPES["data"], b"x" * 20) +
    frame(ENVELOPES["send-failed"]),
    "typed-payload": frame(ENVELOPES["data-typed"],
                           struct.pack("<4d", 1.0, 2.5, -3.0, 1e300)),
    "partial": frame(ENVELOPES["data"], b"y" * 40)[:30],
    "bad-envelope": frame(ENVELOPES["version-2"], b"z"),
    # Bad headers.
    "env-len-0": struct.pack(">II", 10, 0) + b"\0" * 6,
    "env-over-frame": struct.pack(">II", 10, 7) + b"\0" * 6,
    "frame-len-3": struct.pack(">II", 3, 1) + b"\0" * 4,
    "huge-frame": struct.pack(">II", 0xFFFFFFFF, 8) + ENVELOPES["data"][:8],
    "env-over-limit": struct.pack(">II", 4 + 65537, 65537) + b"\x08\x01",
    "header-only": struct.pack(">II", 4 + 2, 2),
    "short": b"\0\0\0",
}

DGRAM_FMT = ">BBHHHIIIIQIIHHHH"


def dgram(type_=1, flags=0, src_hid=1, dst_hid=2, src_inc=100, dst_inc=200,
          seq=1, ack=0, sack=0, msg_id=1, msg_len=None, frag_idx=0,
          frag_cnt=1, data=b"", tsval=0x1234, version=2, length=None):
    if msg_len is None:
        msg_len = len(data)
    if length is None:
        length = len(data)
    return struct.pack(DGRAM_FMT, version, type_, flags, src_hid, dst_hid,
                       src_inc, dst_inc, seq, ack, sack, msg_id, msg_len,
                       frag_idx, frag_cnt, length, tsval) + data


DGRAMS = {
    "data-one": dgram(data=frame(ENVELOPES["data"], b"hi")[4:]),
    "data-frag": dgram(seq=5, ack=3, sack=0b101, msg_id=9, msg_len=3000,
                       frag_idx=1, frag_cnt=3, data=b"f" * 1000),
    "data-retrans": dgram(flags=3, seq=7, data=b"abc"),
    "data-empty-msg": dgram(msg_len=0, data=b""),
    "ack": dgram(type_=2, seq=0, ack=42, sack=(1 << 64) - 1, frag_cnt=0),
    "probe": dgram(type_=3, flags=2, frag_cnt=0),
    "reset": dgram(type_=4, dst_inc=0, frag_cnt=0),
    "max-hids": dgram(type_=2, src_hid=4095, dst_hid=4095, frag_cnt=0),
    # Invalid.
    "bad-version": dgram(version=1, type_=2),
    "bad-type": dgram(type_=5),
    "auth-flag": dgram(type_=2, flags=4),
    "bad-flags": dgram(type_=2, flags=8),
    "bad-hid": dgram(type_=2, src_hid=4096),
    "len-mismatch": dgram(data=b"abcd", length=3),
    "frag-idx": dgram(frag_idx=2, frag_cnt=2, msg_len=8, data=b"ab"),
    "frag-over-msg": dgram(msg_len=2, data=b"abc"),
    "frag-cnt-0": dgram(frag_cnt=0, data=b"a"),
    "short": dgram(type_=2)[:47],
}


# fuzz-auth: u8 mode | u8 flip | datagram (mode bit 0 encrypt, bit 1 seal
# first, bit 2 change byte `flip' after sealing; see fuzz-auth.c).
AUTH = {
    "sealed-data": b"\x02\x00" + DGRAMS["data-frag"],
    "sealed-ack": b"\x02\x00" + DGRAMS["ack"],
    "encrypted-data": b"\x03\x00" + DGRAMS["data-one"],
    "flipped-header": b"\x26\x05" + DGRAMS["data-one"],
    "flipped-tag": b"\x06\xff" + DGRAMS["probe"],
    "flipped-encrypted": b"\x67\x40" + DGRAMS["data-frag"],
    "forged": b"\x00\x00" + DGRAMS["data-one"] + b"\0" * 32,
    "forged-short": b"\x00\x00" + DGRAMS["ack"][:40],
    "sealed-bad-header": b"\x02\x00" + DGRAMS["len-mismatch"],
}

ADD_HOST, HOST_JOIN, HOST_DOWN = 509, 600, 603


def host_op(hid=2, addr="10.0.0.2:7490", inc=0x1234, cookie=0, challenge=0,
            proof=b""):
    b = fv(1, hid) + fs(2, addr) + fv(3, inc)
    if cookie:
        b += varint(4 << 3) + varint(cookie)
    if challenge:
        b += varint(5 << 3) + varint(challenge)
    if proof:
        b += fs(6, proof)
    return fs(28, b)


def join_dgram(e, mode=3):
    """mode 3: sealed by the target, magic and length filled in."""
    return bytes([mode]) + b"CJS1" + struct.pack(">I", len(e)) + e


# fuzz-join: u8 mode | join datagram (see fuzz-join.c).
JOIN = {
    "invite": join_dgram(env(version=2, kind=ADD_HOST, src=0x100000,
                             body=host_op(cookie=0xfeedface))),
    "invite-challenge": join_dgram(env(version=2, kind=ADD_HOST, status=-11,
                                       body=host_op(cookie=7,
                                                    challenge=0x99))),
    "invite-proof": join_dgram(env(version=2, kind=ADD_HOST, body=host_op(
        cookie=7, proof=bytes(range(16))))),
    "invite-short-proof": join_dgram(env(version=2, kind=ADD_HOST, body=host_op(
        cookie=7, proof=b"abc"))),
    "host-join": join_dgram(env(version=2, kind=HOST_JOIN, body=fs(
        30, fs(1, "b") + fs(2, "10.0.0.2:7490") + fv(3, 77) +
        varint(4 << 3) + varint(123456789)))),
    "host-down": join_dgram(env(version=2, kind=HOST_DOWN, src=0x100000,
                                body=host_op(hid=2, inc=77))),
    "host-table": join_dgram(env(version=2, kind=HOST_TABLE, body=fs(
        24, fv(1, 3) + fs(2, host_entry(1, "a", "10.0.0.1:7000", 0.0))))),
    "unsealed": join_dgram(ENVELOPES["host-table"], mode=0),
    "bad-length": join_dgram(ENVELOPES["heartbeat"], mode=1),
}


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus")
    for target, files in (("envelope", ENVELOPES), ("frame", FRAMES),
                          ("dgram", DGRAMS), ("auth", AUTH), ("join", JOIN)):
        d = os.path.join(top, target)
        os.makedirs(d, exist_ok=True)
        for name, data in files.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
