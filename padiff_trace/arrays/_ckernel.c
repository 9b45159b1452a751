/* One-pass float64 kernels for the per-tensor statistics and the per-pair metrics.
 *
 * numpy needs 6-17 passes (and a float64 copy) to produce what these loops produce in
 * one: every element is read once, widened to double in an L1-sized block, and folded
 * into 8 independent lanes that the compiler vectorises. Block totals are added with
 * Neumaier compensation, so the error does not grow with the tensor's length.
 *
 * A block that holds a NaN or an Inf (or overflows) is redone element by element, so
 * the fast path never tests values one at a time. The GIL is released while a kernel
 * runs. Optional: padiff_trace.arrays._native falls back to numpy when this did not build.
 *
 * Element kinds: 'f' float32, 'd' float64, 'e' float16, 'b' bfloat16 (uint16 bits).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define BLK 2048
/* Below this many elements a kernel keeps the GIL: releasing it lets another thread take
 * it for up to a switch interval (5 ms), far longer than the work. */
#define NOGIL_MIN 32768
#define RELEASE_GIL(n) PyThreadState *_save_ts = (n) >= NOGIL_MIN ? PyEval_SaveThread() : NULL;
#define ACQUIRE_GIL() if (_save_ts) PyEval_RestoreThread(_save_ts);
#define L 8

typedef void (*loader_fn)(const char *src, Py_ssize_t start, Py_ssize_t m, double *dst);

static void load_f32(const char *src, Py_ssize_t start, Py_ssize_t m, double *dst) {
    const float *p = (const float *)src + start;
    for (Py_ssize_t i = 0; i < m; i++) dst[i] = (double)p[i];
}

static void load_f64(const char *src, Py_ssize_t start, Py_ssize_t m, double *dst) {
    memcpy(dst, (const double *)src + start, (size_t)m * sizeof(double));
}

static void load_bf16(const char *src, Py_ssize_t start, Py_ssize_t m, double *dst) {
    const uint16_t *p = (const uint16_t *)src + start;
    for (Py_ssize_t i = 0; i < m; i++) {
        uint32_t bits = (uint32_t)p[i] << 16;
        float f;
        memcpy(&f, &bits, sizeof f);
        dst[i] = (double)f;
    }
}

static double half_to_double(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0) {
        double v = (double)man * (1.0 / 16777216.0); /* subnormal: man * 2^-24 */
        return sign ? -v : v;
    }
    uint32_t bits = exp == 31 ? sign | 0x7f800000u | (man << 13) : sign | ((exp + 112) << 23) | (man << 13);
    float f;
    memcpy(&f, &bits, sizeof f);
    return (double)f;
}

static void load_f16(const char *src, Py_ssize_t start, Py_ssize_t m, double *dst) {
    const uint16_t *p = (const uint16_t *)src + start;
    for (Py_ssize_t i = 0; i < m; i++) dst[i] = half_to_double(p[i]);
}

static int kind_info(const char *kind, loader_fn *load, Py_ssize_t *size) {
    switch (kind[0] && !kind[1] ? kind[0] : 0) {
    case 'f': *load = load_f32; *size = 4; return 0;
    case 'd': *load = load_f64; *size = 8; return 0;
    case 'e': *load = load_f16; *size = 2; return 0;
    case 'b': *load = load_bf16; *size = 2; return 0;
    }
    PyErr_Format(PyExc_ValueError, "unknown element kind '%s' (expected f, d, e or b)", kind);
    return -1;
}

/* Neumaier-compensated running total */
typedef struct { double sum, comp; } ksum;

static inline void kadd(ksum *k, double v) {
    double t = k->sum + v;
    if (fabs(k->sum) >= fabs(v)) k->comp += (k->sum - t) + v;
    else k->comp += (v - t) + k->sum;
    k->sum = t;
}

static inline double kval(const ksum *k) { return isfinite(k->sum) ? k->sum + k->comp : k->sum; }

static inline double lanes_sum(const double *v) {
    return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

/* ------------------------------------------------------------------ statistics */

typedef struct {
    Py_ssize_t n, nan, inf;
    ksum s, ss, sa;
    double mn, mx;
} st_acc;

static void st_slow(const double *d, Py_ssize_t m, st_acc *a) {
    for (Py_ssize_t i = 0; i < m; i++) {
        double v = d[i];
        if (isnan(v)) { a->nan++; continue; }
        if (isinf(v)) { a->inf++; continue; }
        a->n++;
        kadd(&a->s, v);
        kadd(&a->ss, v * v);
        kadd(&a->sa, fabs(v));
        if (v < a->mn) a->mn = v;
        if (v > a->mx) a->mx = v;
    }
}

static void st_block(const double *d, Py_ssize_t m, st_acc *a) {
    double s[L] = {0}, ss[L] = {0}, sa[L] = {0}, mn[L], mx[L];
    for (int j = 0; j < L; j++) { mn[j] = INFINITY; mx[j] = -INFINITY; }
    Py_ssize_t i = 0;
    for (; i + L <= m; i += L) {
        for (int j = 0; j < L; j++) {
            double v = d[i + j];
            s[j] += v;
            ss[j] += v * v;
            sa[j] += fabs(v);
            mn[j] = v < mn[j] ? v : mn[j];
            mx[j] = v > mx[j] ? v : mx[j];
        }
    }
    for (int j = 0; i < m; i++, j++) {
        double v = d[i];
        s[j] += v;
        ss[j] += v * v;
        sa[j] += fabs(v);
        mn[j] = v < mn[j] ? v : mn[j];
        mx[j] = v > mx[j] ? v : mx[j];
    }
    double bs = lanes_sum(s), bss = lanes_sum(ss), bsa = lanes_sum(sa);
    if (!isfinite(bs) || !isfinite(bss) || !isfinite(bsa)) { /* NaN, Inf or overflow: exact path */
        st_slow(d, m, a);
        return;
    }
    a->n += m;
    kadd(&a->s, bs);
    kadd(&a->ss, bss);
    kadd(&a->sa, bsa);
    for (int j = 0; j < L; j++) {
        if (mn[j] < a->mn) a->mn = mn[j];
        if (mx[j] > a->mx) a->mx = mx[j];
    }
}

/* float32 blocks: widened and folded with explicit vectors (GCC/Clang vector extensions).
 * On x86 a 256-bit AVX2 version is chosen at run time when the CPU has it. */
typedef float v4f __attribute__((vector_size(16)));
typedef float v2f __attribute__((vector_size(8)));
typedef int v4i __attribute__((vector_size(16)));
typedef double v2d __attribute__((vector_size(16)));
typedef long long v2l __attribute__((vector_size(16)));

typedef struct { double s, ss, sa, mn, mx; } f32_sums;

#define VMIN(T, I, a, b) ((T)(((I)(a) & (I)((a) < (b))) | ((I)(b) & ~(I)((a) < (b)))))
#define VMAX(T, I, a, b) ((T)(((I)(a) & (I)((a) > (b))) | ((I)(b) & ~(I)((a) > (b)))))

/* the elements [i, m) left after the vector loop, and the block's min/max */
static inline void f32_tail(const float *p, Py_ssize_t i, Py_ssize_t m, double lo, double hi, f32_sums *r) {
    for (; i < m; i++) {
        double v = p[i];
        r->s += v; r->ss += v * v; r->sa += fabs(v);
        lo = v < lo ? v : lo; hi = v > hi ? v : hi;
    }
    r->mn = lo;
    r->mx = hi;
}

static void f32_block_128(const float *p, Py_ssize_t m, f32_sums *r) {
    v2d s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0}, q0 = {0}, q1 = {0}, q2 = {0}, q3 = {0};
    v2d a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    v4f mn0 = {INFINITY, INFINITY, INFINITY, INFINITY}, mn1 = mn0;
    v4f mx0 = -mn0, mx1 = -mn0;
    const v2l absm = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL};
    Py_ssize_t i = 0;
    for (; i + 8 <= m; i += 8) {
        v4f f0, f1;
        v2f h0, h1, h2, h3;
        memcpy(&f0, p + i, 16);
        memcpy(&f1, p + i + 4, 16);
        memcpy(&h0, p + i, 8);
        memcpy(&h1, p + i + 2, 8);
        memcpy(&h2, p + i + 4, 8);
        memcpy(&h3, p + i + 6, 8);
        v2d d0 = __builtin_convertvector(h0, v2d), d1 = __builtin_convertvector(h1, v2d);
        v2d d2 = __builtin_convertvector(h2, v2d), d3 = __builtin_convertvector(h3, v2d);
        s0 += d0; s1 += d1; s2 += d2; s3 += d3;
        q0 += d0 * d0; q1 += d1 * d1; q2 += d2 * d2; q3 += d3 * d3;
        a0 += (v2d)((v2l)d0 & absm); a1 += (v2d)((v2l)d1 & absm);
        a2 += (v2d)((v2l)d2 & absm); a3 += (v2d)((v2l)d3 & absm);
        mn0 = VMIN(v4f, v4i, f0, mn0); mn1 = VMIN(v4f, v4i, f1, mn1);
        mx0 = VMAX(v4f, v4i, f0, mx0); mx1 = VMAX(v4f, v4i, f1, mx1);
    }
    v2d s = (s0 + s1) + (s2 + s3), q = (q0 + q1) + (q2 + q3), a = (a0 + a1) + (a2 + a3);
    r->s = s[0] + s[1];
    r->ss = q[0] + q[1];
    r->sa = a[0] + a[1];
    double lo = INFINITY, hi = -INFINITY;
    for (int j = 0; j < 4; j++) {
        lo = mn0[j] < lo ? mn0[j] : lo; lo = mn1[j] < lo ? mn1[j] : lo;
        hi = mx0[j] > hi ? mx0[j] : hi; hi = mx1[j] > hi ? mx1[j] : hi;
    }
    f32_tail(p, i, m, lo, hi, r);
}

#if defined(__GNUC__) && defined(__x86_64__)
#define HAVE_AVX2_PATH 1
typedef float v8f __attribute__((vector_size(32)));
typedef int v8i __attribute__((vector_size(32)));
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4l __attribute__((vector_size(32)));

__attribute__((target("avx2"))) static void f32_block_256(const float *p, Py_ssize_t m, f32_sums *r) {
    v4d s0 = {0}, s1 = {0}, q0 = {0}, q1 = {0}, a0 = {0}, a1 = {0};
    v8f mn = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY}, mx = -mn;
    const v4l absm = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL};
    Py_ssize_t i = 0;
    for (; i + 8 <= m; i += 8) {
        v8f f;
        v4f f0, f1;
        memcpy(&f, p + i, 32);
        memcpy(&f0, p + i, 16);
        memcpy(&f1, p + i + 4, 16);
        v4d d0 = __builtin_convertvector(f0, v4d), d1 = __builtin_convertvector(f1, v4d);
        s0 += d0; s1 += d1;
        q0 += d0 * d0; q1 += d1 * d1;
        a0 += (v4d)((v4l)d0 & absm); a1 += (v4d)((v4l)d1 & absm);
        mn = VMIN(v8f, v8i, f, mn);
        mx = VMAX(v8f, v8i, f, mx);
    }
    v4d s = s0 + s1, q = q0 + q1, a = a0 + a1;
    r->s = (s[0] + s[1]) + (s[2] + s[3]);
    r->ss = (q[0] + q[1]) + (q[2] + q[3]);
    r->sa = (a[0] + a[1]) + (a[2] + a[3]);
    double lo = INFINITY, hi = -INFINITY;
    for (int j = 0; j < 8; j++) {
        lo = mn[j] < lo ? mn[j] : lo;
        hi = mx[j] > hi ? mx[j] : hi;
    }
    f32_tail(p, i, m, lo, hi, r);
}
#endif

typedef void (*f32_block_fn)(const float *, Py_ssize_t, f32_sums *);

/* 1 when this build has the AVX2 paths and the CPU runs them */
static int avx2_ok(void) {
#ifdef HAVE_AVX2_PATH
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
#else
    return 0;
#endif
}

/* ``generic``: the portable path even where AVX2 is available (tests compare the two) */
static f32_block_fn pick_f32_block(int generic) {
#ifdef HAVE_AVX2_PATH
    if (!generic && avx2_ok()) return f32_block_256;
#endif
    return f32_block_128;
}

static void st_f32(const float *p, Py_ssize_t count, st_acc *a, char *dst, int generic) {
    f32_block_fn blockf = pick_f32_block(generic);
    double blk[BLK];
    for (Py_ssize_t s = 0; s < count; s += BLK) {
        Py_ssize_t m = count - s < BLK ? count - s : BLK;
        f32_sums r;
        blockf(p + s, m, &r);
        if (dst) memcpy(dst + s * 4, p + s, (size_t)m * 4); /* the block is in L1 now */
        if (!isfinite(r.s) || !isfinite(r.ss) || !isfinite(r.sa)) { /* NaN or Inf in this block */
            load_f32((const char *)p, s, m, blk);
            st_slow(blk, m, a);
            continue;
        }
        a->n += m;
        kadd(&a->s, r.s);
        kadd(&a->ss, r.ss);
        kadd(&a->sa, r.sa);
        if (r.mn < a->mn) a->mn = r.mn;
        if (r.mx > a->mx) a->mx = r.mx;
    }
}

static int get_buf(PyObject *obj, Py_buffer *view, Py_ssize_t size, Py_ssize_t *count, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (view->len % size) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes is not a whole number of %zd-byte elements", what, view->len, size);
        PyBuffer_Release(view);
        return -1;
    }
    *count = view->len / size;
    return 0;
}

static double devsq_sum(const char *buf, loader_fn load, Py_ssize_t count, double mean) {
    ksum tot = {0.0, 0.0};
    double blk[BLK];
    for (Py_ssize_t s = 0; s < count; s += BLK) {
        Py_ssize_t m = count - s < BLK ? count - s : BLK;
        load(buf, s, m, blk);
        double acc[L] = {0};
        Py_ssize_t i = 0;
        for (; i + L <= m; i += L)
            for (int j = 0; j < L; j++) {
                double v = blk[i + j] - mean;
                acc[j] += v * v;
            }
        for (int j = 0; i < m; i++, j++) {
            double v = blk[i] - mean;
            acc[j] += v * v;
        }
        double b = lanes_sum(acc);
        if (!isfinite(b)) {
            b = 0.0;
            for (i = 0; i < m; i++)
                if (isfinite(blk[i])) b += (blk[i] - mean) * (blk[i] - mean);
        }
        kadd(&tot, b);
    }
    return kval(&tot);
}

/* the sums of ``count`` elements; with ``dst``, the bytes are also copied there, block by block */
static void stats_sums(const char *buf, loader_fn load, Py_ssize_t size, Py_ssize_t count, st_acc *a, char *dst,
                       int generic) {
    a->mn = INFINITY;
    a->mx = -INFINITY;
    if (load == load_f32) {
        st_f32((const float *)buf, count, a, dst, generic);
        return;
    }
    double blk[BLK];
    for (Py_ssize_t s = 0; s < count; s += BLK) {
        Py_ssize_t m = count - s < BLK ? count - s : BLK;
        load(buf, s, m, blk);
        st_block(blk, m, a);
        if (dst) memcpy(dst + s * size, buf + s * size, (size_t)(m * size));
    }
}

static void st_merge(st_acc *a, const st_acc *b) {
    a->n += b->n;
    a->nan += b->nan;
    a->inf += b->inf;
    kadd(&a->s, b->s.sum); a->s.comp += b->s.comp;
    kadd(&a->ss, b->ss.sum); a->ss.comp += b->ss.comp;
    kadd(&a->sa, b->sa.sum); a->sa.comp += b->sa.comp;
    if (b->mn < a->mn) a->mn = b->mn;
    if (b->mx > a->mx) a->mx = b->mx;
}

#define CANCEL 1e4 /* mean^2 / var above which the one-pass variance is recomputed (as in _stats.py) */

/* summary(buffer, kind, copy_to=None, generic=False) -> (min, max, mean, std, mean_abs, l2, nan, inf),
 * _stats.STAT_FIELDS. ``copy_to``: a writable buffer of the same size that receives a copy of the
 * bytes, made in the same pass (each block is copied while it is in L1). ``generic``: no AVX2 path. */
static PyObject *k_summary(PyObject *self, PyObject *args) {
    PyObject *obj, *dst_obj = Py_None;
    const char *kind;
    int generic = 0;
    if (!PyArg_ParseTuple(args, "Os|Op", &obj, &kind, &dst_obj, &generic)) return NULL;
    loader_fn load;
    Py_ssize_t size, count;
    if (kind_info(kind, &load, &size) < 0) return NULL;
    Py_buffer view, dview = {0};
    if (get_buf(obj, &view, size, &count, "summary") < 0) return NULL;
    if (dst_obj != Py_None) {
        if (PyObject_GetBuffer(dst_obj, &dview, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
            PyBuffer_Release(&view);
            return NULL;
        }
        if (dview.len != view.len) {
            PyErr_Format(PyExc_ValueError, "summary: copy_to holds %zd bytes, the input %zd", dview.len, view.len);
            PyBuffer_Release(&dview);
            PyBuffer_Release(&view);
            return NULL;
        }
    }
    st_acc a = {0};
    double out[8];
    RELEASE_GIL(count)
    stats_sums((const char *)view.buf, load, size, count, &a, (char *)dview.buf, generic);
    double s = kval(&a.s), ss = kval(&a.ss), sa = kval(&a.sa);
    out[5] = sqrt(ss);
    out[6] = (double)a.nan;
    out[7] = (double)a.inf;
    if (a.n == 0) {
        out[0] = out[1] = out[2] = out[3] = out[4] = NAN;
    } else {
        double n = (double)a.n, mean = s / n, var = ss / n - mean * mean;
        if (a.mn != a.mx && (var <= 0.0 || mean * mean > CANCEL * var))
            var = devsq_sum((const char *)view.buf, load, count, mean) / n;
        out[0] = a.mn;
        out[1] = a.mx;
        out[2] = mean;
        out[3] = sqrt(var > 0.0 ? var : 0.0);
        out[4] = sa / n;
    }
    ACQUIRE_GIL()
    if (dview.obj) PyBuffer_Release(&dview);
    PyBuffer_Release(&view);
    return Py_BuildValue("(dddddddd)", out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7]);
}

/* ------------------------------------------------------------------ pair metrics */

/* The sums of one chunk of a pair, one double each, in this order: the record that pair() fills.
 * analyzer/_sums.py declares the same fields with their merge rules (SUM_FIELDS) and checks
 * them against PAIR_FIELDS when it loads this module. Adding a sum: a name here, a row there. */
#define PAIR_SUMS(X) X(n) X(arg) X(max_abs) X(sum_abs) X(max_rel) X(sum_rel) X(ab) X(aa) X(bb) X(dd) \
    X(sum_abs_b) X(fail) X(nan_a) X(nan_b) X(inf_a) X(inf_b) X(nan_mis) X(inf_mis) \
    X(bits_n) X(same_bits) X(ulp_n) X(ulp_max) X(ulp_sum)
#define PS_FIELD(f) double f;
#define PS_NAME(f) "," #f
typedef struct { PAIR_SUMS(PS_FIELD) } pair_sums;
static const char pair_fields[] = PAIR_SUMS(PS_NAME); /* ",n,arg,...": PAIR_FIELDS is this without the first comma */

typedef struct {
    Py_ssize_t n, arg, nan_a, nan_b, inf_a, inf_b, nan_mis, inf_mis;
    double fail, max_abs, max_rel;
    ksum sum_abs, sum_rel, ab, aa, bb, dd, sum_abs_b;
} mt_acc;

/* count non-finite values (and one-sided ones) and zero them on both sides, in place */
static void mt_sanitize(double *x, double *y, Py_ssize_t m, mt_acc *a) {
    for (Py_ssize_t i = 0; i < m; i++) {
        int na = isnan(x[i]) != 0, nb = isnan(y[i]) != 0, ia = isinf(x[i]) != 0, ib = isinf(y[i]) != 0;
        if (!(na | nb | ia | ib)) continue;
        a->nan_a += na;
        a->nan_b += nb;
        a->inf_a += ia;
        a->inf_b += ib;
        a->nan_mis += na ^ nb;
        a->inf_mis += (ia | ib) && !(na | nb) && x[i] != y[i];
        x[i] = 0.0;
        y[i] = 0.0;
    }
}

/* one block of widened elements; a block holding NaN/Inf is sanitized and measured again */
static inline __attribute__((always_inline)) void mt_block_body(double *x, double *y, Py_ssize_t m, Py_ssize_t offset,
                                                                double atol, double rtol, double tiny, mt_acc *a) {
    for (int sanitized = 0;; sanitized = 1) {
        double ab[L] = {0}, aa[L] = {0}, bb[L] = {0}, dd[L] = {0}, sd[L] = {0}, sb[L] = {0}, sr[L] = {0}, fl[L] = {0};
        double mxd[L] = {0}, mxr[L] = {0};
        Py_ssize_t i = 0;
#define MT_BODY(J, X, Y)                        \
    {                                           \
        double xv = (X), yv = (Y);              \
        ab[J] += xv * yv;                       \
        aa[J] += xv * xv;                       \
        bb[J] += yv * yv;                       \
        double d = xv - yv;                     \
        dd[J] += d * d;                         \
        double ad = fabs(d), ay = fabs(yv);     \
        sd[J] += ad;                            \
        sb[J] += ay;                            \
        fl[J] += ad > atol + rtol * ay ? 1.0 : 0.0; \
        double r = ad / (ay + tiny);            \
        sr[J] += r;                             \
        mxd[J] = ad > mxd[J] ? ad : mxd[J];     \
        mxr[J] = r > mxr[J] ? r : mxr[J];       \
    }
        for (; i + L <= m; i += L)
            for (int j = 0; j < L; j++) MT_BODY(j, x[i + j], y[i + j])
        for (int j = 0; i < m; i++, j++) MT_BODY(j, x[i], y[i])
#undef MT_BODY
        double baa = lanes_sum(aa), bbb = lanes_sum(bb);
        if (!sanitized && !(isfinite(baa) && isfinite(bbb) && isfinite(lanes_sum(sr)))) {
            mt_sanitize(x, y, m, a);
            continue;
        }
        a->n += m;
        kadd(&a->ab, lanes_sum(ab));
        kadd(&a->aa, baa);
        kadd(&a->bb, bbb);
        kadd(&a->dd, lanes_sum(dd));
        kadd(&a->sum_abs, lanes_sum(sd));
        kadd(&a->sum_abs_b, lanes_sum(sb));
        kadd(&a->sum_rel, lanes_sum(sr));
        a->fail += lanes_sum(fl);
        double bmax = 0.0, brel = 0.0;
        for (int j = 0; j < L; j++) {
            if (mxd[j] > bmax) bmax = mxd[j];
            if (mxr[j] > brel) brel = mxr[j];
        }
        if (brel > a->max_rel) a->max_rel = brel;
        if (bmax > a->max_abs || (a->arg < 0 && m > 0)) { /* first occurrence of the new maximum */
            for (i = 0; i < m; i++)
                if (fabs(x[i] - y[i]) == bmax) break;
            a->max_abs = bmax;
            a->arg = offset + i;
        }
        return;
    }
}

typedef void (*mt_block_fn)(double *, double *, Py_ssize_t, Py_ssize_t, double, double, double, mt_acc *);

static void mt_block_generic(double *x, double *y, Py_ssize_t m, Py_ssize_t offset, double atol, double rtol,
                             double tiny, mt_acc *a) {
    mt_block_body(x, y, m, offset, atol, rtol, tiny, a);
}

#ifdef HAVE_AVX2_PATH
__attribute__((target("avx2"))) static void mt_block_avx2(double *x, double *y, Py_ssize_t m, Py_ssize_t offset,
                                                          double atol, double rtol, double tiny, mt_acc *a) {
    mt_block_body(x, y, m, offset, atol, rtol, tiny, a);
}

/* float32 pairs on AVX2: 4 elements per step in double, 10 vector accumulators (no spills).
 * Returns 0 when a block held NaN/Inf: the caller redoes that block on the widened path. */
__attribute__((target("avx2"))) static int mt_f32_block_256(const float *pa, const float *pb, Py_ssize_t m,
                                                            Py_ssize_t offset, double atol, double rtol,
                                                            double tiny, mt_acc *a) {
    v4d ab = {0}, aa = {0}, bb = {0}, dd = {0}, sd = {0}, sb = {0}, sr = {0}, fl = {0}, mxd = {0}, mxr = {0};
    const v4l absm = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL};
    const v4d vat = {atol, atol, atol, atol}, vrt = {rtol, rtol, rtol, rtol}, vti = {tiny, tiny, tiny, tiny};
    const v4d one = {1.0, 1.0, 1.0, 1.0};
    Py_ssize_t i = 0;
    for (; i + 4 <= m; i += 4) {
        v4f fa, fb;
        memcpy(&fa, pa + i, 16);
        memcpy(&fb, pb + i, 16);
        v4d x = __builtin_convertvector(fa, v4d), y = __builtin_convertvector(fb, v4d);
        ab += x * y;
        aa += x * x;
        bb += y * y;
        v4d d = x - y;
        dd += d * d;
        v4d ad = (v4d)((v4l)d & absm), ay = (v4d)((v4l)y & absm);
        sd += ad;
        sb += ay;
        fl += (v4d)((v4l)one & (v4l)(ad > vat + vrt * ay));
        v4d r = ad / (ay + vti);
        sr += r;
        mxd = VMAX(v4d, v4l, ad, mxd);
        mxr = VMAX(v4d, v4l, r, mxr);
    }
    double s_ab = (ab[0] + ab[1]) + (ab[2] + ab[3]), s_aa = (aa[0] + aa[1]) + (aa[2] + aa[3]);
    double s_bb = (bb[0] + bb[1]) + (bb[2] + bb[3]), s_dd = (dd[0] + dd[1]) + (dd[2] + dd[3]);
    double s_sd = (sd[0] + sd[1]) + (sd[2] + sd[3]), s_sb = (sb[0] + sb[1]) + (sb[2] + sb[3]);
    double s_sr = (sr[0] + sr[1]) + (sr[2] + sr[3]), s_fl = (fl[0] + fl[1]) + (fl[2] + fl[3]);
    double bmax = 0.0, brel = 0.0;
    for (int j = 0; j < 4; j++) {
        bmax = mxd[j] > bmax ? mxd[j] : bmax;
        brel = mxr[j] > brel ? mxr[j] : brel;
    }
    for (; i < m; i++) {
        double x = pa[i], y = pb[i], d = x - y, ad = fabs(d), ay = fabs(y), r = ad / (ay + tiny);
        s_ab += x * y; s_aa += x * x; s_bb += y * y; s_dd += d * d; s_sd += ad; s_sb += ay; s_sr += r;
        s_fl += ad > atol + rtol * ay ? 1.0 : 0.0;
        bmax = ad > bmax ? ad : bmax;
        brel = r > brel ? r : brel;
    }
    if (!(isfinite(s_aa) && isfinite(s_bb) && isfinite(s_sr))) return 0;
    a->n += m;
    kadd(&a->ab, s_ab);
    kadd(&a->aa, s_aa);
    kadd(&a->bb, s_bb);
    kadd(&a->dd, s_dd);
    kadd(&a->sum_abs, s_sd);
    kadd(&a->sum_abs_b, s_sb);
    kadd(&a->sum_rel, s_sr);
    a->fail += s_fl;
    if (brel > a->max_rel) a->max_rel = brel;
    if (bmax > a->max_abs || (a->arg < 0 && m > 0)) {
        for (i = 0; i < m; i++)
            if (fabs((double)pa[i] - (double)pb[i]) == bmax) break;
        a->max_abs = bmax;
        a->arg = offset + i;
    }
    return 1;
}
#endif

/* ------------------------------------------------------------------ distance in units of the format
 * analyzer/_ulp.py is the reference and says what is measured: the bit patterns of both sides in
 * the pair's format (the other side rounded to it, to nearest even), identical ones counted, and
 * the distance of their monotone integers (sign set: -(bits & ~sign)) maximised and summed exactly;
 * NaN, or an Inf against anything but the same Inf, has no distance. Formats of 16 and 32 bits run
 * in 32-bit lanes (a distance is below 2**32), float64 in 64-bit ones; the loops have no branches
 * (signs are random: a branch would be mispredicted half the time), so they vectorise. */

typedef void (*bits_fn)(const char *src, Py_ssize_t start, Py_ssize_t m, void *dst);

static inline uint32_t f32_to_bf16(uint32_t u) {
    uint32_t h = u >> 16, q = h & 0x7f ? h : h | 0x40; /* NaN: sign and upper payload, quiet where it would vanish */
    uint32_t r = (u + 0x7fffu + (h & 1u)) >> 16;       /* round to nearest even */
    return (u & 0x7fffffffu) > 0x7f800000u ? q : r;    /* selects, no branch: vectorises */
}

static inline uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* patterns of 16 and 32 bits go to uint32_t, of 64 bits to uint64_t */
static void bits_u16(const char *src, Py_ssize_t start, Py_ssize_t m, void *dst) {
    const uint16_t *p = (const uint16_t *)src + start;
    uint32_t *d = (uint32_t *)dst;
    for (Py_ssize_t i = 0; i < m; i++) d[i] = p[i];
}

static void bits_u32(const char *src, Py_ssize_t start, Py_ssize_t m, void *dst) {
    memcpy(dst, (const uint32_t *)src + start, (size_t)m * sizeof(uint32_t));
}

static void bits_u64(const char *src, Py_ssize_t start, Py_ssize_t m, void *dst) {
    memcpy(dst, (const uint64_t *)src + start, (size_t)m * sizeof(uint64_t));
}

static void bits_f_b(const char *src, Py_ssize_t start, Py_ssize_t m, void *dst) {
    const uint32_t *p = (const uint32_t *)src + start;
    uint32_t *d = (uint32_t *)dst;
    for (Py_ssize_t i = 0; i < m; i++) d[i] = f32_to_bf16(p[i]);
}

static void bits_e_b(const char *src, Py_ssize_t start, Py_ssize_t m, void *dst) {
    const uint16_t *p = (const uint16_t *)src + start;
    uint32_t *d = (uint32_t *)dst;
    for (Py_ssize_t i = 0; i < m; i++) d[i] = f32_to_bf16(f32_bits((float)half_to_double(p[i])));
}

static void bits_d_f(const char *src, Py_ssize_t start, Py_ssize_t m, void *dst) {
    const double *p = (const double *)src + start;
    uint32_t *d = (uint32_t *)dst;
    for (Py_ssize_t i = 0; i < m; i++) d[i] = f32_bits((float)p[i]);
}

static void bits_d_b(const char *src, Py_ssize_t start, Py_ssize_t m, void *dst) {
    const double *p = (const double *)src + start;
    uint32_t *d = (uint32_t *)dst;
    for (Py_ssize_t i = 0; i < m; i++) d[i] = f32_to_bf16(f32_bits((float)p[i]));
}

/* the bit patterns of kind ``k`` in format ``u``; NULL: a rounding left to numpy (to float16).
 * ``direct``: 1 when the stored bytes are the patterns (float32 read in place, no copy). */
static bits_fn pick_bits(char k, char u, int *direct) {
    *direct = k == u && k == 'f';
    if (k == u) return k == 'd' ? bits_u64 : k == 'f' ? bits_u32 : bits_u16;
    if (u == 'b') return k == 'f' ? bits_f_b : k == 'e' ? bits_e_b : k == 'd' ? bits_d_b : NULL;
    if (u == 'f' && k == 'd') return bits_d_f;
    return NULL;
}

typedef struct {
    int w;
    uint64_t expm;
    uint64_t bits_n, same, n, max;
#ifdef __SIZEOF_INT128__
    unsigned __int128 sum;
#else
    uint64_t sum_hi, sum_lo; /* the 32-bit halves of the distances, summed apart */
#endif
} ulp_acc;

static inline void ulp_add_sum(ulp_acc *a, uint64_t hi, uint64_t lo, int shift) {
#ifdef __SIZEOF_INT128__
    a->sum += ((unsigned __int128)hi << shift) + lo;
#else
    if (shift == 16) { /* at most 2**43: normalise to 32-bit halves */
        lo += (hi & 0xffffu) << 16;
        hi >>= 16;
    }
    a->sum_lo += lo;
    a->sum_hi += hi + (a->sum_lo >> 32);
    a->sum_lo &= 0xffffffffu;
#endif
}

static double ulp_total(const ulp_acc *a) {
#ifdef __SIZEOF_INT128__
    return (double)a->sum; /* correctly rounded, as Python's float(int) */
#else
    return ldexp((double)a->sum_hi, 32) + (double)a->sum_lo;
#endif
}

/* one block (at most BLK elements) of 16- or 32-bit patterns: every count fits 32 bits */
static inline __attribute__((always_inline)) void ulp32_body(const uint32_t *x, const uint32_t *y, Py_ssize_t m,
                                                             ulp_acc *a) {
    const int top = a->w - 1;
    const uint32_t mag = (1u << top) - 1, expm = (uint32_t)a->expm;
    uint32_t same = 0, n = 0, mx = 0, hi = 0, lo = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        uint32_t bx = x[i], by = y[i];
        uint32_t sx = 0u - (bx >> top), sy = 0u - (by >> top); /* all ones: negative */
        uint32_t ox = ((bx & mag) ^ sx) - sx, oy = ((by & mag) ^ sy) - sy; /* monotone, as int32 */
        uint32_t lt = 0u - (uint32_t)((int32_t)ox < (int32_t)oy);
        uint32_t eq = bx == by, fin = ((bx & expm) != expm) & ((by & expm) != expm);
        uint32_t d = (((ox - oy) ^ lt) - lt) & (0u - fin); /* |ox - oy| < 2**32; no distance: 0 */
        same += eq;
        n += fin | (eq & ((bx & mag) == expm)); /* equal infinities are 0 apart */
        mx = d > mx ? d : mx;
        hi += d >> 16;
        lo += d & 0xffffu;
    }
    a->bits_n += (uint64_t)m;
    a->same += same;
    a->n += n;
    if (mx > a->max) a->max = mx;
    ulp_add_sum(a, hi, lo, 16);
}

static inline __attribute__((always_inline)) void ulp64_body(const uint64_t *x, const uint64_t *y, Py_ssize_t m,
                                                             ulp_acc *a) {
    const uint64_t mag = ((uint64_t)1 << 63) - 1, expm = a->expm;
    uint64_t same = 0, n = 0, mx = a->max, hi = 0, lo = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        uint64_t bx = x[i], by = y[i];
        uint64_t sx = (uint64_t)0 - (bx >> 63), sy = (uint64_t)0 - (by >> 63);
        uint64_t ox = ((bx & mag) ^ sx) - sx, oy = ((by & mag) ^ sy) - sy;
        uint64_t lt = (uint64_t)0 - (uint64_t)((int64_t)ox < (int64_t)oy);
        uint64_t eq = bx == by, fin = ((bx & expm) != expm) & ((by & expm) != expm);
        uint64_t d = (((ox - oy) ^ lt) - lt) & ((uint64_t)0 - fin); /* exact in uint64: |ox - oy| < 2**64 */
        same += eq;
        n += fin | (eq & ((bx & mag) == expm));
        mx = d > mx ? d : mx;
        hi += d >> 32;
        lo += d & 0xffffffffu;
    }
    a->bits_n += (uint64_t)m;
    a->same += same;
    a->n += n;
    a->max = mx;
    ulp_add_sum(a, hi, lo, 32);
}

typedef void (*ulp_block_fn)(const void *, const void *, Py_ssize_t, ulp_acc *);

static void ulp_block_generic(const void *x, const void *y, Py_ssize_t m, ulp_acc *a) {
    if (a->w == 64) ulp64_body((const uint64_t *)x, (const uint64_t *)y, m, a);
    else ulp32_body((const uint32_t *)x, (const uint32_t *)y, m, a);
}

#ifdef HAVE_AVX2_PATH
__attribute__((target("avx2"))) static void ulp_block_avx2(const void *x, const void *y, Py_ssize_t m, ulp_acc *a) {
    if (a->w == 64) ulp64_body((const uint64_t *)x, (const uint64_t *)y, m, a);
    else ulp32_body((const uint32_t *)x, (const uint32_t *)y, m, a);
}
#endif

/* pair(a, kind_a, b, kind_b, atol, rtol, tiny, out, generic=False, ulp="") -> bool: fills ``out`` (a
 * writable buffer of len(PAIR_FIELDS) doubles) with the sums of this chunk, see PAIR_SUMS. ``generic``:
 * the portable path even where AVX2 is available (tests compare the two). ``ulp``: the kind of the
 * format ULP distances are measured in ("": none); True when the ULP sums were filled, False when
 * not asked or when a side needs a rounding this kernel does not make (its fields are then 0). */
static PyObject *k_pair(PyObject *self, PyObject *args) {
    PyObject *oa, *ob, *oout;
    const char *ka, *kb, *ku = "";
    double atol, rtol, tiny;
    int generic = 0;
    if (!PyArg_ParseTuple(args, "OsOsdddO|ps", &oa, &ka, &ob, &kb, &atol, &rtol, &tiny, &oout, &generic, &ku))
        return NULL;
    loader_fn la, lb;
    Py_ssize_t sa, sb, na, nb;
    if (kind_info(ka, &la, &sa) < 0 || kind_info(kb, &lb, &sb) < 0) return NULL;
    bits_fn ua = NULL, ub = NULL;
    int da = 0, db = 0;
    ulp_acc u;
    memset(&u, 0, sizeof u);
    if (ku[0]) {
        loader_fn lu;
        Py_ssize_t su;
        if (kind_info(ku, &lu, &su) < 0) return NULL;
        u.w = (int)su * 8;
        u.expm = ku[0] == 'd' ? 0x7ff0000000000000ULL : ku[0] == 'f' ? 0x7f800000u : ku[0] == 'e' ? 0x7c00u : 0x7f80u;
        ua = pick_bits(ka[0], ku[0], &da);
        ub = pick_bits(kb[0], ku[0], &db);
        if (!ua || !ub) ua = ub = NULL;
    }
    Py_buffer vo;
    if (PyObject_GetBuffer(oout, &vo, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) return NULL;
    if (vo.len != (Py_ssize_t)sizeof(pair_sums)) {
        PyErr_Format(PyExc_ValueError, "pair: out holds %zd bytes, the sums %zd", vo.len, (Py_ssize_t)sizeof(pair_sums));
        PyBuffer_Release(&vo);
        return NULL;
    }
    Py_buffer va, vb;
    if (get_buf(oa, &va, sa, &na, "pair a") < 0) {
        PyBuffer_Release(&vo);
        return NULL;
    }
    if (get_buf(ob, &vb, sb, &nb, "pair b") < 0) {
        PyBuffer_Release(&va);
        PyBuffer_Release(&vo);
        return NULL;
    }
    if (na != nb) {
        PyBuffer_Release(&va);
        PyBuffer_Release(&vb);
        PyBuffer_Release(&vo);
        PyErr_Format(PyExc_ValueError, "pair: %zd elements on side a, %zd on side b", na, nb);
        return NULL;
    }
    mt_acc a;
    memset(&a, 0, sizeof a);
    a.arg = -1;
    int fast = !generic && avx2_ok();
    mt_block_fn blockf = mt_block_generic;
#ifdef HAVE_AVX2_PATH
    if (fast) blockf = mt_block_avx2;
#endif
    int f32 = fast && la == load_f32 && lb == load_f32;
    RELEASE_GIL(na)
    double x[BLK], y[BLK];
    uint64_t bx[BLK], by[BLK]; /* the block's bit patterns in the ULP format (uint32_t below 64 bits) */
    ulp_block_fn ulpf = ulp_block_generic;
#ifdef HAVE_AVX2_PATH
    if (fast) ulpf = ulp_block_avx2;
#endif
    for (Py_ssize_t s = 0; s < na; s += BLK) {
        Py_ssize_t m = na - s < BLK ? na - s : BLK;
        if (ua) { /* while the block is in L1 */
            const void *px = bx, *py = by;
            if (da) px = (const uint32_t *)va.buf + s;
            else ua((const char *)va.buf, s, m, bx);
            if (db) py = (const uint32_t *)vb.buf + s;
            else ub((const char *)vb.buf, s, m, by);
            ulpf(px, py, m, &u);
        }
#ifdef HAVE_AVX2_PATH
        if (f32 && mt_f32_block_256((const float *)va.buf + s, (const float *)vb.buf + s, m, s, atol, rtol, tiny, &a))
            continue;
#endif
        la((const char *)va.buf, s, m, x);
        lb((const char *)vb.buf, s, m, y);
        blockf(x, y, m, s, atol, rtol, tiny, &a);
    }
    pair_sums o = {
        .n = (double)a.n, .arg = a.arg < 0 ? 0.0 : (double)a.arg, .max_abs = a.max_abs, .sum_abs = kval(&a.sum_abs),
        .max_rel = a.max_rel, .sum_rel = kval(&a.sum_rel), .ab = kval(&a.ab), .aa = kval(&a.aa), .bb = kval(&a.bb),
        .dd = kval(&a.dd), .sum_abs_b = kval(&a.sum_abs_b), .fail = a.fail, .nan_a = (double)a.nan_a,
        .nan_b = (double)a.nan_b, .inf_a = (double)a.inf_a, .inf_b = (double)a.inf_b, .nan_mis = (double)a.nan_mis,
        .inf_mis = (double)a.inf_mis, .bits_n = (double)u.bits_n, .same_bits = (double)u.same, .ulp_n = (double)u.n,
        .ulp_max = (double)u.max, .ulp_sum = ulp_total(&u),
    };
    memcpy(vo.buf, &o, sizeof o);
    ACQUIRE_GIL()
    PyBuffer_Release(&va);
    PyBuffer_Release(&vb);
    PyBuffer_Release(&vo);
    return PyBool_FromLong(ua != NULL);
}

/* avx2() -> True when this build has the AVX2 paths and this CPU runs them (``generic=False`` uses them) */
static PyObject *k_avx2(PyObject *self, PyObject *args) {
    return PyBool_FromLong(avx2_ok());
}

/* fletcher32(buffer) -> HDF5's Fletcher-32 checksum of the bytes (H5_checksum_fletcher32:
 * big-endian 16-bit words, sums folded every 360 words). Lets the writer hand HDF5 finished
 * chunks (write_direct_chunk) that read back as ordinary fletcher32-filtered chunks. */
static PyObject *k_fletcher32(PyObject *self, PyObject *args) {
    PyObject *obj;
    if (!PyArg_ParseTuple(args, "O", &obj)) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    const uint8_t *data = (const uint8_t *)view.buf;
    size_t len = (size_t)view.len / 2;
    uint32_t sum1 = 0, sum2 = 0;
    while (len) {
        size_t tlen = len > 360 ? 360 : len;
        len -= tlen;
        do {
            sum1 += (uint32_t)(((uint16_t)data[0]) << 8) | ((uint16_t)data[1]);
            data += 2;
            sum2 += sum1;
        } while (--tlen);
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    if (view.len % 2) {
        sum1 += (uint32_t)(((uint16_t)*data) << 8);
        sum2 += sum1;
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong((unsigned long)((sum2 << 16) | sum1));
}

/* ------------------------------------------------------------------ CRC-32
 * zlib's CRC-32 (polynomial 0x04C11DB7, bit-reflected, pre- and post-inverted): the same value
 * as ``zlib.crc32``, so traces stay readable and verifiable by numpy + h5py alone. On x86-64
 * with PCLMULQDQ the bytes are folded 128 bits at a time with carry-less multiplies (Intel,
 * "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ", 2009): 8 independent lanes
 * of 16 bytes, folded 128 bytes ahead per step, reduced to 32 bits by Barrett reduction; with
 * VPCLMULQDQ and AVX-512 the lanes are 4 zmm registers folded 256 bytes ahead. The fold
 * constants are (x^n mod P << 32)' << 1 (' = bit reflection over 64 bits) for the distances
 * n named beside them; a table-driven loop takes what is left (fewer than 16 bytes). */

static uint32_t crc_tab[256];

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_tab[i] = c;
    }
}

/* ``c``: the running register (the inverted CRC) */
static uint32_t crc_bytes(uint32_t c, const uint8_t *p, size_t n) {
    while (n--) c = crc_tab[(c ^ *p++) & 0xff] ^ (c >> 8);
    return c;
}

#if defined(__GNUC__) && defined(__x86_64__)
#define HAVE_CLMUL_PATH 1
#include <immintrin.h>

/* x^(128*8 + 32), x^(128*8 - 32): 128 bytes ahead; x^(128 + 32), x^(128 - 32): 16 bytes ahead */
#define K_128B_HI 0x1e88ef372ULL
#define K_128B_LO 0x14a7fe880ULL
#define K_16B_HI 0x1751997d0ULL
#define K_16B_LO 0x0ccaa009eULL
#define K_64 0x163cd6124ULL    /* x^64 */
#define P_REFL 0x1db710641ULL  /* P' */
#define MU_REFL 0x1f7011641ULL /* (x^64 / P)' */
/* x^(2048 + 32), x^(2048 - 32): 256 bytes ahead (4 zmm); x^(512 +- 32): 64 bytes ahead */
#define K_256B_HI 0x11542778aULL
#define K_256B_LO 0x1322d1430ULL
#define K_64B_HI 0x154442bd4ULL
#define K_64B_LO 0x1c6e41596ULL

__attribute__((target("pclmul,sse4.1"))) static inline __m128i fold16(__m128i x, __m128i k, __m128i next) {
    return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

/* one 128-bit lane -> the 32-bit register */
__attribute__((target("pclmul,sse4.1"))) static uint32_t clmul_reduce(__m128i x) {
    const __m128i k34 = _mm_set_epi64x((long long)K_16B_LO, (long long)K_16B_HI);
    const __m128i mask32 = _mm_setr_epi32(~0, 0, ~0, 0);
    /* 128 -> 64 bits */
    __m128i t = _mm_clmulepi64_si128(x, k34, 0x10);
    x = _mm_xor_si128(_mm_srli_si128(x, 8), t);
    const __m128i k5 = _mm_set_epi64x(0, (long long)K_64);
    t = _mm_srli_si128(x, 4);
    x = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x, mask32), k5, 0x00), t);
    /* Barrett reduction 64 -> 32 bits */
    const __m128i poly = _mm_set_epi64x((long long)MU_REFL, (long long)P_REFL);
    t = _mm_clmulepi64_si128(_mm_and_si128(x, mask32), poly, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), poly, 0x00);
    return (uint32_t)_mm_extract_epi32(_mm_xor_si128(x, t), 1);
}

/* ``n`` >= 128 and a multiple of 16; ``c``: the running register */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc_clmul(uint32_t c, const uint8_t *p, size_t n) {
    __m128i x[8];
    for (int j = 0; j < 8; j++) x[j] = _mm_loadu_si128((const __m128i *)(p + 16 * j));
    x[0] = _mm_xor_si128(x[0], _mm_cvtsi32_si128((int)c));
    p += 128;
    n -= 128;
    const __m128i k8 = _mm_set_epi64x((long long)K_128B_LO, (long long)K_128B_HI);
    for (; n >= 128; p += 128, n -= 128)
        for (int j = 0; j < 8; j++) x[j] = fold16(x[j], k8, _mm_loadu_si128((const __m128i *)(p + 16 * j)));
    const __m128i k1 = _mm_set_epi64x((long long)K_16B_LO, (long long)K_16B_HI);
    __m128i acc = x[0];
    for (int j = 1; j < 8; j++) acc = fold16(acc, k1, x[j]);
    for (; n >= 16; p += 16, n -= 16) acc = fold16(acc, k1, _mm_loadu_si128((const __m128i *)p));
    return clmul_reduce(acc);
}

/* compilers that know VPCLMULQDQ and the AVX-512 intrinsics used (GCC 10, clang 8) */
#if (defined(__clang__) && __clang_major__ >= 8) || (!defined(__clang__) && __GNUC__ >= 10)
#define HAVE_VCLMUL_PATH 1
/* the same on 512-bit registers: ``n`` >= 256 and a multiple of 64 */
__attribute__((target("pclmul,sse4.1,avx512f,avx512vl,vpclmulqdq"))) static uint32_t crc_vclmul(uint32_t c, const uint8_t *p,
                                                                                             size_t n) {
    __m512i x0 = _mm512_loadu_si512((const void *)p), x1 = _mm512_loadu_si512((const void *)(p + 64));
    __m512i x2 = _mm512_loadu_si512((const void *)(p + 128)), x3 = _mm512_loadu_si512((const void *)(p + 192));
    x0 = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)c)));
    p += 256;
    n -= 256;
    const __m512i k4 = _mm512_broadcast_i32x4(_mm_set_epi64x((long long)K_256B_LO, (long long)K_256B_HI));
#define VFOLD(x, k, next) \
    _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11), next, 0x96)
    for (; n >= 256; p += 256, n -= 256) {
        x0 = VFOLD(x0, k4, _mm512_loadu_si512((const void *)p));
        x1 = VFOLD(x1, k4, _mm512_loadu_si512((const void *)(p + 64)));
        x2 = VFOLD(x2, k4, _mm512_loadu_si512((const void *)(p + 128)));
        x3 = VFOLD(x3, k4, _mm512_loadu_si512((const void *)(p + 192)));
    }
    const __m512i k1 = _mm512_broadcast_i32x4(_mm_set_epi64x((long long)K_64B_LO, (long long)K_64B_HI));
    x0 = VFOLD(x0, k1, x1);
    x0 = VFOLD(x0, k1, x2);
    x0 = VFOLD(x0, k1, x3);
    for (; n >= 64; p += 64, n -= 64) x0 = VFOLD(x0, k1, _mm512_loadu_si512((const void *)p));
#undef VFOLD
    /* the four 128-bit lanes of x0 -> one */
    const __m128i k16 = _mm_set_epi64x((long long)K_16B_LO, (long long)K_16B_HI);
    __m128i acc = _mm512_extracti32x4_epi32(x0, 0);
    acc = fold16(acc, k16, _mm512_extracti32x4_epi32(x0, 1));
    acc = fold16(acc, k16, _mm512_extracti32x4_epi32(x0, 2));
    acc = fold16(acc, k16, _mm512_extracti32x4_epi32(x0, 3));
    return clmul_reduce(acc);
}
#endif /* HAVE_VCLMUL_PATH */
#endif /* HAVE_CLMUL_PATH */

/* 0: table only; 1: PCLMULQDQ; 2: VPCLMULQDQ on zmm */
static int crc_level(void) {
#ifdef HAVE_CLMUL_PATH
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("pclmul") || !__builtin_cpu_supports("sse4.1")) return 0;
#ifdef HAVE_VCLMUL_PATH
    if (__builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"))
        return 2;
#endif
    return 1;
#else
    return 0;
#endif
}

/* zlib.crc32(p[:n], value) at ``level`` (at most crc_level()) */
static uint32_t crc32_at(uint32_t value, const uint8_t *p, size_t n, int level) {
    uint32_t c = ~value;
#ifdef HAVE_VCLMUL_PATH
    if (level >= 2 && n >= 256) {
        size_t m = n & ~(size_t)63;
        c = crc_vclmul(c, p, m);
        p += m;
        n -= m;
    }
#endif
#ifdef HAVE_CLMUL_PATH
    if (level >= 1 && n >= 128) {
        size_t m = n & ~(size_t)15;
        c = crc_clmul(c, p, m);
        p += m;
        n -= m;
    }
#endif
    return ~crc_bytes(c, p, n);
}

#define CRC_NOGIL_MIN (64 * 1024)

/* crc32(buffer, value=0, level=-1) -> zlib.crc32(buffer, value). ``level``: -1 the fastest this
 * CPU runs; 0 the table; 1 PCLMULQDQ; 2 VPCLMULQDQ (capped at crc_level(); tests compare them). */
static PyObject *k_crc32(PyObject *self, PyObject *args) {
    PyObject *obj;
    unsigned int value = 0;
    int level = -1;
    if (!PyArg_ParseTuple(args, "O|Ii", &obj, &value, &level)) return NULL;
    int top = crc_level();
    if (level < 0 || level > top) level = top;
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0) return NULL;
    uint32_t c;
    if (view.len >= CRC_NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        c = crc32_at((uint32_t)value, (const uint8_t *)view.buf, (size_t)view.len, level);
        Py_END_ALLOW_THREADS
    } else {
        c = crc32_at((uint32_t)value, (const uint8_t *)view.buf, (size_t)view.len, level);
    }
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong((unsigned long)c);
}

/* crc32_chunks(buffer, chunk) -> bytes: the uint32 (native order) zlib.crc32 of each ``chunk``
 * bytes (the last may be shorter), computed without the GIL in one call. */
static PyObject *k_crc32_chunks(PyObject *self, PyObject *args) {
    PyObject *obj;
    Py_ssize_t chunk;
    if (!PyArg_ParseTuple(args, "On", &obj, &chunk)) return NULL;
    if (chunk <= 0) {
        PyErr_SetString(PyExc_ValueError, "crc32_chunks: chunk must be positive");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0) return NULL;
    Py_ssize_t count = view.len ? (view.len - 1) / chunk + 1 : 0;
    PyObject *out = PyBytes_FromStringAndSize(NULL, count * 4);
    if (!out) {
        PyBuffer_Release(&view);
        return NULL;
    }
    uint32_t *dst = (uint32_t *)PyBytes_AS_STRING(out);
    const uint8_t *src = (const uint8_t *)view.buf;
    int level = crc_level();
    Py_ssize_t len = view.len;
    RELEASE_GIL(len >= CRC_NOGIL_MIN ? NOGIL_MIN : 0)
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t lo = i * chunk, m = len - lo < chunk ? len - lo : chunk;
        dst[i] = crc32_at(0, src + lo, (size_t)m, level);
    }
    ACQUIRE_GIL()
    PyBuffer_Release(&view);
    return out;
}

/* crc32_level() -> the fastest CRC path this CPU runs (0 table, 1 PCLMULQDQ, 2 VPCLMULQDQ) */
static PyObject *k_crc32_level(PyObject *self, PyObject *args) {
    return PyLong_FromLong(crc_level());
}

static PyMethodDef methods[] = {
    {"summary", k_summary, METH_VARARGS,
     "summary(buffer, kind, copy_to=None) -> (min, max, mean, std, mean_abs, l2, nan, inf)"},
    {"fletcher32", k_fletcher32, METH_VARARGS, "fletcher32(buffer) -> HDF5 Fletcher-32 checksum"},
    {"pair", k_pair, METH_VARARGS,
     "pair(a, kind_a, b, kind_b, atol, rtol, tiny, out, generic=False, ulp='') -> bool: sums into out"},
    {"avx2", k_avx2, METH_NOARGS, "avx2() -> whether the AVX2 paths run here"},
    {"crc32", k_crc32, METH_VARARGS, "crc32(buffer, value=0, level=-1) -> zlib.crc32(buffer, value)"},
    {"crc32_chunks", k_crc32_chunks, METH_VARARGS, "crc32_chunks(buffer, chunk) -> bytes of uint32 CRC-32 per chunk"},
    {"crc32_level", k_crc32_level, METH_NOARGS, "crc32_level() -> 0 table, 1 PCLMULQDQ, 2 VPCLMULQDQ"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ckernel", "One-pass float64 statistics and pair metrics.",
                                    -1, methods};

/* API: 2 = summary() takes copy_to; 3 = pair() fills a PAIR_FIELDS record, generic switches, avx2();
 * 4 = crc32(), crc32_chunks(), crc32_level(); 5 = pair(..., ulp) measures ULP distances */
PyMODINIT_FUNC PyInit__ckernel(void) {
    crc_init();
    PyObject *m = PyModule_Create(&module);
    if (m && (PyModule_AddIntConstant(m, "API", 5) < 0 || PyModule_AddStringConstant(m, "PAIR_FIELDS", pair_fields + 1) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
