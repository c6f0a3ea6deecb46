/*
 * pvm-msg.c -- PVM messages on collsd, written as a PVM program.
 *
 *   pvm-msg echo          prints its tid ("t%x"), then sends every message
 *                         back to its sender unchanged, until tag 99
 *   pvm-msg check TID     against the echo task TID: every pack type with
 *                         strides 1 and 3, in every encoding, on both
 *                         routes, compared item by item; pvm_packf and
 *                         pvm_unpackf (arrays, values, counts, bad
 *                         formats) against the typed calls; psend/precv per
 *                         datatype; mcast, probe, nrecv, trecv, bufinfo;
 *                         the buffer calls; errors by code; options;
 *                         pvm_tasks, pvm_config, pvm_pstat; and the
 *                         PvmTaskExit notification of the echo's end
 *   pvm-msg host-delete HOST
 *                         asks for PvmHostDelete of host HOST (its pvmd
 *                         tid, t%x), prints "waiting", and checks the
 *                         message: that tid packed as an int
 *   pvm-msg hosts ADDR    pvm_mstat, then pvm_addhosts of the standalone
 *                         daemon at ADDR (its pvmd tid back, pvm_config
 *                         lists 3 hosts), pvm_delhosts of it (2 again),
 *                         and both calls' errors per host (unreachable,
 *                         already there, unknown)
 *   pvm-msg host-add HOST asks for one PvmHostAdd, prints "waiting", and
 *                         checks the message: a count of 1 and the pvmd
 *                         tid HOST
 *
 * Each check prints one line "NAME: ok" or "NAME: FAIL ..." and the exit
 * status is the number of failures.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>

#include "check.h"

static int
echo(void)
{
    int bufid, tag, src;

    printf("t%x\n", pvm_mytid());
    fflush(stdout);
    for (;;) {
        bufid = pvm_recv(-1, -1);
        if (bufid < 0)
            return 1;
        pvm_bufinfo(bufid, NULL, &tag, &src);
        if (tag == 99)
            break;
        pvm_setsbuf(bufid);
        if (pvm_send(src, tag) < 0)
            return 1;
    }
    pvm_exit();
    return 0;
}

/* Test data, 15 items of each type: strided packs take every 3rd. */
#define N 15
static char bytes[N];
static short shorts[N];
static unsigned short ushorts[N];
static int ints[N];
static unsigned int uints[N];
static long longs[N];
static unsigned long ulongs[N];
static float floats[N], cplx[2 * N];
static double doubles[N], dcplx[2 * N];
static char str[] = "hello, pvm on collsd";

static void
fill(void)
{
    int i;

    for (i = 0; i < N; i++) {
        bytes[i] = (char)(i * 37 - 100);
        shorts[i] = (short)(i % 2 ? -i * 1111 : SHRT_MAX - i);
        ushorts[i] = (unsigned short)(USHRT_MAX - i * 999);
        ints[i] = i % 3 == 0 ? INT_MIN + i : i * -123456;
        uints[i] = UINT_MAX - (unsigned)i * 77777u;
        longs[i] = i % 2 ? LONG_MIN + i : (long)i * 1234567890123L;
        ulongs[i] = ULONG_MAX - (unsigned long)i * 987654321987UL;
        floats[i] = (float)i * -1.25f + 0.1f;
        doubles[i] = (double)i * 3.141592653589793 - 1e300 * (i == 7);
        cplx[2 * i] = (float)i + 0.5f;
        cplx[2 * i + 1] = -(float)i;
        dcplx[2 * i] = 1.0 / (i + 1);
        dcplx[2 * i + 1] = -1e-300 * i;
    }
}

/* Packs every type with stride st (count N / st). */
static int
pack_all(int st)
{
    int n = N / st, rc = 0;

    rc |= pvm_pkbyte(bytes, n, st);
    rc |= pvm_pkshort(shorts, n, st);
    rc |= pvm_pkushort(ushorts, n, st);
    rc |= pvm_pkint(ints, n, st);
    rc |= pvm_pkuint(uints, n, st);
    rc |= pvm_pklong(longs, n, st);
    rc |= pvm_pkulong(ulongs, n, st);
    rc |= pvm_pkfloat(floats, n, st);
    rc |= pvm_pkdouble(doubles, n, st);
    rc |= pvm_pkcplx(cplx, n, st);
    rc |= pvm_pkdcplx(dcplx, n, st);
    rc |= pvm_pkstr(str);
    return rc;
}

/* Unpacks what pack_all(st) packed with stride st and compares: the
   items at multiples of st match, the others stay zero. */
static int
unpack_cmp(int st, char *why, size_t cap)
{
    static char b[N];
    static short s[N];
    static unsigned short us[N];
    static int in[N];
    static unsigned int ui[N];
    static long l[N];
    static unsigned long ul[N];
    static float f[N], c[2 * N];
    static double d[N], dc[2 * N];
    char sb[64];
    int n = N / st, i, rc = 0, k;

    memset(b, 0, sizeof(b)), memset(s, 0, sizeof(s));
    memset(us, 0, sizeof(us)), memset(in, 0, sizeof(in));
    memset(ui, 0, sizeof(ui)), memset(l, 0, sizeof(l));
    memset(ul, 0, sizeof(ul)), memset(f, 0, sizeof(f));
    memset(c, 0, sizeof(c)), memset(d, 0, sizeof(d));
    memset(dc, 0, sizeof(dc));
    rc |= pvm_upkbyte(b, n, st);
    rc |= pvm_upkshort(s, n, st);
    rc |= pvm_upkushort(us, n, st);
    rc |= pvm_upkint(in, n, st);
    rc |= pvm_upkuint(ui, n, st);
    rc |= pvm_upklong(l, n, st);
    rc |= pvm_upkulong(ul, n, st);
    rc |= pvm_upkfloat(f, n, st);
    rc |= pvm_upkdouble(d, n, st);
    rc |= pvm_upkcplx(c, n, st);
    rc |= pvm_upkdcplx(dc, n, st);
    rc |= pvm_upkstr(sb);
    if (rc != 0) {
        snprintf(why, cap, "an unpack failed");
        return 0;
    }
    for (i = 0; i < N; i++) {
        k = i % st == 0 && i / st < n;
#define SAME(arr, ref, what)                                                   \
    if (memcmp(&arr[i], k ? (const void *)&ref[i] : (const void *)zero,        \
               sizeof(arr[i])) != 0) {                                         \
        snprintf(why, cap, "%s item %d differs", what, i);                     \
        return 0;                                                              \
    }
        static const char zero[16];
        SAME(b, bytes, "byte");
        SAME(s, shorts, "short");
        SAME(us, ushorts, "ushort");
        SAME(in, ints, "int");
        SAME(ui, uints, "uint");
        SAME(l, longs, "long");
        SAME(ul, ulongs, "ulong");
        SAME(f, floats, "float");
        SAME(d, doubles, "double");
        if (memcmp(&c[2 * i], k ? &cplx[2 * i] : (const float *)zero,
                   2 * sizeof(float)) != 0 ||
            memcmp(&dc[2 * i], k ? &dcplx[2 * i] : (const double *)zero,
                   2 * sizeof(double)) != 0) {
            snprintf(why, cap, "complex item %d differs", i);
            return 0;
        }
    }
    if (strcmp(sb, str) != 0) {
        snprintf(why, cap, "string \"%s\"", sb);
        return 0;
    }
    return 1;
}

static void
check_pack(int peer)
{
    static const struct {
        int enc;
        const char *name;
    } encs[] = {{PvmDataDefault, "default"},
                {PvmDataRaw, "raw"},
                {PvmDataInPlace, "inplace"}};
    static const struct {
        int route;
        const char *name;
    } routes[] = {{PvmDontRoute, "daemons"}, {PvmRouteDirect, "direct"}};
    char name[64], why[128];
    int e, r, st, id, bytes_, tag, src, ok;

    for (r = 0; r < 2; r++) {
        pvm_setopt(PvmRoute, routes[r].route);
        for (e = 0; e < 3; e++) {
            for (st = 1; st <= 3; st += 2) {
                snprintf(name, sizeof(name), "pack %s stride %d %s",
                         encs[e].name, st, routes[r].name);
                why[0] = '\0';
                ok = pvm_initsend(encs[e].enc) > 0 && pack_all(st) == 0 &&
                     pvm_send(peer, 10 + st) == 0;
                id = ok ? pvm_recv(peer, 10 + st) : -1;
                ok = id > 0 && pvm_bufinfo(id, &bytes_, &tag, &src) == 0 &&
                     tag == 10 + st && src == peer && bytes_ > 0 &&
                     unpack_cmp(st, why, sizeof(why));
                CHECK(name, ok, "bufid %d %s", id, why);
            }
        }
    }
    CHECK("getopt route", pvm_getopt(PvmRoute) == PvmRouteDirect, "%d",
          pvm_getopt(PvmRoute));
    pvm_setopt(PvmRoute, PvmDontRoute);
}

/* pvm_packf and pvm_unpackf against the typed calls, in each encoding:
   arrays by address with counts and strides ('*' and digits), values,
   strings, and malformed formats. */
static void
check_packf(int peer)
{
    static const int encs[] = {PvmDataDefault, PvmDataRaw, PvmDataInPlace};
    static const char *const names[] = {"default", "raw", "inplace"};
    char name[64], why[128], c, s[64];
    short h;
    unsigned short uh;
    int e, id, ok, i, n = N / 3, got[N];
    unsigned int ui;
    long l;
    unsigned long ul;
    float f, cx[4];
    double d, dx[4];

    for (e = 0; e < 3; e++) {
        /* arrays with stride 3: what pack_all(3) and unpack_cmp(3) do */
        snprintf(name, sizeof(name), "packf arrays %s", names[e]);
        why[0] = '\0';
        ok = pvm_packf("%+ %*.3c %5.*hd %*.*hud %5.3d %*.3ud %*.3ld "
                       "%*.3lud %*.3f %*.3lf %*.3x %*.3lx %s",
                       encs[e], n, bytes, 3, shorts, n, 3, ushorts, ints, n,
                       uints, n, longs, n, ulongs, n, floats, n, doubles, n,
                       cplx, n, dcplx, str) == 0 &&
             pvm_send(peer, 40) == 0;
        id = ok ? pvm_recv(peer, 40) : -1;
        ok = id > 0 && unpack_cmp(3, why, sizeof(why));
        CHECK(name, ok, "bufid %d %s", id, why);

        /* values (packed by value: no count, no stride) back through
           pvm_unpackf's addresses */
        snprintf(name, sizeof(name), "packf values %s", names[e]);
        ok = pvm_packf("%+%c%hd%hud%d%ud%ld%lud%f%lf%2x%2lx%s", encs[e], 'Q',
                       -1234, 65000, INT_MIN, UINT_MAX, LONG_MIN, ULONG_MAX,
                       1.5, -2.25e300, cplx, dcplx, "v") == 0 &&
             pvm_send(peer, 41) == 0;
        id = ok ? pvm_recv(peer, 41) : -1;
        ok = id > 0 &&
             pvm_unpackf("%c %hd %hud %d %ud %ld %lud %f %lf %2x %2lx %s", &c,
                         &h, &uh, &i, &ui, &l, &ul, &f, &d, cx, dx, s) == 0;
        CHECK(name,
              ok && c == 'Q' && h == -1234 && uh == 65000 && i == INT_MIN &&
                  ui == UINT_MAX && l == LONG_MIN && ul == ULONG_MAX &&
                  f == 1.5f && d == -2.25e300 &&
                  memcmp(cx, cplx, 4 * sizeof(float)) == 0 &&
                  memcmp(dx, dcplx, 4 * sizeof(double)) == 0 &&
                  strcmp(s, "v") == 0,
              "bufid %d c %d h %d uh %u i %d f %g d %g s %.8s", id, c, h, uh, i,
              f, d, s);

        /* typed packs, unpacked with a count from an argument */
        snprintf(name, sizeof(name), "unpackf count %s", names[e]);
        memset(got, 0, sizeof(got));
        ok = pvm_initsend(encs[e]) > 0 && pvm_pkint(ints, N, 1) == 0 &&
             pvm_send(peer, 42) == 0;
        id = ok ? pvm_recv(peer, 42) : -1;
        ok = id > 0 && pvm_unpackf("%*d", N, got) == 0 &&
             memcmp(got, ints, sizeof(ints)) == 0;
        CHECK(name, ok, "bufid %d", id);
    }
    pvm_initsend(PvmDataDefault);
    CHECK("packf bad formats",
          pvm_packf("%q", 1) == PvmBadParam &&
              pvm_packf("%3.d", ints) == PvmBadParam &&
              pvm_packf("%*d", -1, ints) == PvmBadParam &&
              pvm_packf("%5") == PvmBadParam &&
              pvm_unpackf("%z", ints) == PvmBadParam &&
              pvm_packf(NULL) == PvmBadParam,
          "accepted");
}

static void
check_psend(int peer)
{
    static const int dts[] = {PVM_BYTE,   PVM_SHORT,  PVM_INT,   PVM_FLOAT,
                              PVM_CPLX,   PVM_DOUBLE, PVM_DCPLX, PVM_LONG,
                              PVM_USHORT, PVM_UINT,   PVM_ULONG};
    static const void *src[] = {bytes, shorts, ints,    floats, cplx,  doubles,
                                dcplx, longs,  ushorts, uints,  ulongs};
    static const size_t sz[] = {1,
                                sizeof(short),
                                sizeof(int),
                                sizeof(float),
                                2 * sizeof(float),
                                sizeof(double),
                                2 * sizeof(double),
                                sizeof(long),
                                sizeof(short),
                                sizeof(int),
                                sizeof(long)};
    char out[2 * N * sizeof(double)], name[48];
    int i, rtid, rtag, rlen, rc;

    for (i = 0; i < 11; i++) {
        memset(out, 0, sizeof(out));
        rc = pvm_psend(peer, 20 + i, (void *)src[i], N, dts[i]);
        if (rc == 0)
            rc = pvm_precv(peer, 20 + i, out, N, dts[i], &rtid, &rtag, &rlen);
        snprintf(name, sizeof(name), "psend/precv datatype %d", dts[i]);
        CHECK(name,
              rc == 0 && rtid == peer && rtag == 20 + i && rlen == N &&
                  memcmp(out, src[i], N * sz[i]) == 0,
              "rc %d rtid t%x rtag %d rlen %d", rc, rtid, rtag, rlen);
    }
}

static void
check_calls(int peer)
{
    int me = pvm_mytid(), tids[2] = {peer, me}, id, b1, old, n, i, x, y;
    int bytes_, tag, src, found;
    struct timeval tv = {0, 100000};
    struct pvmtaskinfo *ti;
    struct pvmhostinfo *hi;
    int nhost, narch;

    /* mcast skips the caller */
    pvm_initsend(PvmDataDefault);
    x = 4242;
    pvm_pkint(&x, 1, 1);
    CHECK("mcast", pvm_mcast(tids, 2, 30) == 0, "failed");
    id = pvm_recv(-1, 30);
    y = 0;
    pvm_upkint(&y, 1, 1);
    pvm_bufinfo(id, NULL, NULL, &src);
    CHECK("mcast echo", y == 4242 && src == peer, "y %d src t%x", y, src);
    CHECK("mcast not to self", pvm_nrecv(-1, 30) == 0, "self got it");

    /* probe, then receive what was probed */
    pvm_initsend(PvmDataRaw);
    pvm_pkint(&x, 1, 1);
    pvm_send(peer, 40);
    for (i = 0; i < 1000 && (id = pvm_probe(peer, 40)) == 0; i++)
        usleep(10000);
    CHECK("probe",
          id > 0 && pvm_bufinfo(id, &bytes_, &tag, &src) == 0 && tag == 40 &&
              src == peer && bytes_ == (int)sizeof(int),
          "id %d tag %d src t%x bytes %d", id, tag, src, bytes_);
    id = pvm_nrecv(peer, 40);
    y = 0;
    CHECK("nrecv", id > 0 && pvm_upkint(&y, 1, 1) == 0 && y == 4242,
          "id %d y %d", id, y);
    CHECK("trecv times out", pvm_trecv(peer, 41, &tv) == 0, "got one");
    pvm_send(peer, 41);
    CHECK("trecv", pvm_trecv(peer, 41, NULL) > 0, "nothing");
    CHECK("end of buffer", pvm_upkint(&y, 2, 1) == PvmNoData, "no error");

    /* buffers */
    b1 = pvm_mkbuf(PvmDataDefault);
    old = pvm_setsbuf(b1);
    CHECK("setsbuf", b1 > 0 && old > 0 && pvm_getsbuf() == b1, "b1 %d old %d",
          b1, old);
    x = 7;
    pvm_pkint(&x, 1, 1);
    pvm_send(peer, 42);
    id = pvm_recv(peer, 42);
    CHECK("getrbuf", pvm_getrbuf() == id, "%d != %d", pvm_getrbuf(), id);
    old = pvm_setrbuf(0);
    CHECK("setrbuf", old == id && pvm_getrbuf() == 0, "old %d", old);
    pvm_setrbuf(id);
    y = 0;
    pvm_upkint(&y, 1, 1);
    CHECK("setrbuf unpack", y == 7, "y %d", y);
    CHECK("freebuf", pvm_freebuf(b1) == 0 && pvm_getsbuf() == 0, "failed");
    CHECK("freebuf twice", pvm_freebuf(b1) == PvmNoSuchBuf, "freed twice");

    /* errors by code */
    CHECK("error NoBuf", pvm_send(peer, 1) == PvmNoBuf, "%d",
          pvm_send(peer, 1));
    CHECK("error NoSuchBuf", pvm_setsbuf(12345) == PvmNoSuchBuf, "no");
    CHECK("error BadParam mkbuf", pvm_mkbuf(77) == PvmBadParam, "no");
    CHECK("error BadParam recv", pvm_recv(-5, 1) == PvmBadParam, "no");
    CHECK("error NotImpl option", pvm_setopt(PvmOutputTid, 1) == PvmNotImpl,
          "no");
    CHECK("error NotImpl mbox", pvm_putinfo("x", 0, 0) == PvmNotImpl, "no");
    CHECK("error NoParent", pvm_parent() == PvmNoParent, "%d", pvm_parent());
    CHECK("setopt debugmask",
          pvm_setopt(PvmDebugMask, 3) == 0 && pvm_getopt(PvmDebugMask) == 3,
          "no");
    CHECK("setopt autoerr", pvm_setopt(PvmAutoErr, 0) == 1, "no");
    pvm_setopt(PvmAutoErr, 1);

    /* the machine */
    CHECK("pstat", pvm_pstat(peer) == PvmOk, "%d", pvm_pstat(peer));
    CHECK("pstat gone", pvm_pstat(peer + 4000) == PvmNoTask, "%d",
          pvm_pstat(peer + 4000));
    found = 0;
    if (pvm_tasks(0, &n, &ti) == 0)
        for (i = 0; i < n; i++)
            found +=
                (ti[i].ti_tid == peer && ti[i].ti_host == pvm_tidtohost(peer) &&
                 strcmp(ti[i].ti_a_out, "pvm-msg") == 0) +
                (ti[i].ti_tid == me);
    CHECK("tasks", found == 2, "found %d", found);
    CHECK("tasks of a host",
          pvm_tasks(pvm_tidtohost(peer), &n, &ti) == 0 && n >= 1 &&
              ti[0].ti_host == pvm_tidtohost(peer),
          "n %d", n);
    CHECK("config",
          pvm_config(&nhost, &narch, &hi) == 0 && nhost == 2 && narch >= 1 &&
              (hi[0].hi_tid == pvm_tidtohost(me) ||
               hi[1].hi_tid == pvm_tidtohost(me)),
          "nhost %d", nhost);
    CHECK("tidtohost", pvm_tidtohost(peer) == (peer & ~0xfffff), "t%x",
          pvm_tidtohost(peer));
    CHECK("mytid", me > 0 && pvm_mytid() == me, "t%x", me);
}

static void
check_notify(int peer)
{
    int id, tid = 0, src;

    CHECK("notify", pvm_notify(PvmTaskExit, 50, 1, &peer) == 0, "failed");
    pvm_initsend(PvmDataDefault);
    pvm_send(peer, 99);
    id = pvm_recv(-1, 50);
    pvm_bufinfo(id, NULL, NULL, &src);
    CHECK("notify task exit",
          id > 0 && pvm_upkint(&tid, 1, 1) == 0 && tid == peer &&
              src == pvm_tidtohost(pvm_mytid()),
          "id %d tid t%x src t%x", id, tid, src);
}

/* Waits for the notification of tag after printing "waiting"; checks it
   holds n ints, the last one a pvmd tid (want, if not 0). */
static void
wait_notify(const char *name, int what, int tag, int cnt, int *tids, int n,
            int want)
{
    int v[2] = {0, 0}, id, src;

    CHECK(name, pvm_notify(what, tag, cnt, tids) == 0, "notify failed");
    printf("waiting\n");
    fflush(stdout);
    id = pvm_recv(-1, tag);
    pvm_bufinfo(id, NULL, NULL, &src);
    CHECK(name,
          id > 0 && pvm_upkint(v, n, 1) == 0 && (n == 1 || v[0] == 1) &&
              v[n - 1] > 0 && (v[n - 1] & 0xfffff) == 0 &&
              (want == 0 || v[n - 1] == want) &&
              pvm_upkint(v, 1, 1) == PvmNoData,
          "id %d values %d t%x", id, v[0], v[1]);
}

/* Polls pvm_config (10 s at most) until it lists n hosts. */
static int
config_hosts(int n)
{
    struct pvmhostinfo *hi;
    int i, nhost = -1, narch;

    for (i = 0; i < 1000 && nhost != n; i++) {
        if (i > 0)
            usleep(10000);
        if (pvm_config(&nhost, &narch, &hi) < 0)
            return -1;
    }
    return nhost;
}

static int
hosts(char *addr)
{
    char *bad[] = {"127.0.0.1:1"}, *nosuch[] = {"nosuch-host"},
         *dup[] = {"it1"};
    int info = 0, rc;

    CHECK("mstat", pvm_mstat("it1") == PvmOk, "%d", pvm_mstat("it1"));
    CHECK("mstat unknown", pvm_mstat("nosuch-host") == PvmNoHost, "%d",
          pvm_mstat("nosuch-host"));
    rc = pvm_addhosts(&addr, 1, &info);
    CHECK("addhosts", rc == 1 && info > 0 && (info & 0xfffff) == 0,
          "rc %d info %d", rc, info);
    CHECK("config after add", config_hosts(3) == 3, "%d", config_hosts(3));
    rc = pvm_delhosts(&addr, 1, &info);
    CHECK("delhosts", rc == 1 && info == 0, "rc %d info %d", rc, info);
    CHECK("config after delete", config_hosts(2) == 2, "%d", config_hosts(2));
    rc = pvm_addhosts(bad, 1, &info);
    CHECK("addhosts unreachable", rc == 0 && info < 0, "rc %d info %d", rc,
          info);
    rc = pvm_addhosts(dup, 1, &info);
    CHECK("addhosts duplicate", rc == 0 && info == PvmDupHost, "rc %d info %d",
          rc, info);
    rc = pvm_delhosts(nosuch, 1, &info);
    CHECK("delhosts unknown", rc == 0 && info == PvmNoHost, "rc %d info %d", rc,
          info);
    return failures;
}

int
main(int argc, char **argv)
{
    int peer;

    if (argc == 2 && strcmp(argv[1], "echo") == 0)
        return echo();
    if (argc == 3 && strcmp(argv[1], "host-delete") == 0 &&
        sscanf(argv[2], "t%x", (unsigned *)&peer) == 1) {
        wait_notify("notify host delete", PvmHostDelete, 51, 1, &peer, 1, peer);
        return failures;
    }
    if (argc == 3 && strcmp(argv[1], "hosts") == 0)
        return hosts(argv[2]);
    if (argc == 3 && strcmp(argv[1], "host-add") == 0 &&
        sscanf(argv[2], "t%x", (unsigned *)&peer) == 1) {
        wait_notify("notify host add", PvmHostAdd, 52, 1, NULL, 2, peer);
        return failures;
    }
    if (argc != 3 || strcmp(argv[1], "check") != 0 ||
        sscanf(argv[2], "t%x", (unsigned *)&peer) != 1) {
        fprintf(stderr, "usage: pvm-msg echo | check tTID | host-delete "
                        "tHOST | host-add tHOST | hosts ADDR\n");
        return 2;
    }
    if (pvm_mytid() < 0)
        return 1;
    fill();
    check_pack(peer);
    check_packf(peer);
    check_psend(peer);
    check_calls(peer);
    check_notify(peer);
    pvm_exit();
    return failures;
}
