/* The C ABI checked from C (and, compiled with `c++ -x c++`, from C++) against the
 * conformance corpus and the hrry command-line tool.
 *
 *   capi_test CORPUS_DIR HRRY_BINARY WORK_DIR
 *
 * - every valid corpus file opens (from its path and from an exact-size copy of its
 *   bytes), and each tensor's row-major bytes equal what `hrry export` writes after
 *   the .npy header; dequantized values equal them for quantized tensors;
 * - every invalid corpus file is refused with HRRY_INVALID naming its manifest rule,
 *   and its validation report lists that rule only;
 * - NULL pointers, wrong lengths, out-of-range indices and truncated buffers give
 *   the documented statuses, and failed calls reset their outputs;
 * - 8 threads reading and dequantizing one handle agree with one thread.
 *
 * Prints "N passed, N failed" and exits non-zero on any failure. Run under
 * AddressSanitizer and UndefinedBehaviorSanitizer by run.sh. */

#include <hrry.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static long passed, failed;

/* Records one check; prints the failing ones. */
static void check(int ok, const char *fmt, ...) {
    va_list args;
    if (ok) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr, "FAIL: ");
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fprintf(stderr, " (last error: %s)\n", hrry_last_error());
}

/* A status check with both names in the message. */
#define EXPECT_STATUS(got, want, ...)                                                \
    do {                                                                             \
        int got_ = (got);                                                            \
        char where_[512];                                                            \
        snprintf(where_, sizeof where_, __VA_ARGS__);                                \
        check(got_ == (want), "%s: %s, expected %s", where_, hrry_status_name(got_), \
              hrry_status_name(want));                                               \
    } while (0)

/* A non-NULL sentinel that failing calls must overwrite with NULL. */
#define GARBAGE ((void *)(uintptr_t)0x10)

static char *corpus_dir, *hrry_bin, *work_dir;

/* --- files --------------------------------------------------------------- */

typedef struct {
    unsigned char *data;
    size_t len;
} bytes_t;

/* Reads a whole file into an exact-size allocation (so that ASan sees any read
 * past its end); data is NULL when it cannot be read. */
static bytes_t read_file(const char *path) {
    bytes_t b = {NULL, 0};
    FILE *fp = fopen(path, "rb");
    long size;
    if (!fp) return b;
    if (fseek(fp, 0, SEEK_END) == 0 && (size = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0) {
        b.data = (unsigned char *)malloc(size > 0 ? (size_t)size : 1);
        if (b.data && fread(b.data, 1, (size_t)size, fp) == (size_t)size) {
            b.len = (size_t)size;
        } else {
            free(b.data);
            b.data = NULL;
        }
    }
    fclose(fp);
    return b;
}

/* --- the manifest -------------------------------------------------------- */

typedef struct {
    char path[256];
    char format[16];
    char rule[64];
    int valid;
} entry_t;

/* A small JSON scanner, enough for corpus/manifest.json: reads each object of the
 * "files" array and keeps path, format, valid and rule. */
typedef struct {
    const char *p, *end;
} scan_t;

static void skip_ws(scan_t *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
        s->p++;
}

/* Reads a string token into out (truncated to cap - 1; escapes kept as written). */
static int read_string(scan_t *s, char *out, size_t cap) {
    size_t n = 0;
    skip_ws(s);
    if (s->p >= s->end || *s->p != '"') return 0;
    s->p++;
    while (s->p < s->end && *s->p != '"') {
        if (*s->p == '\\' && s->p + 1 < s->end) {
            if (out && n + 1 < cap) out[n++] = *s->p;
            s->p++;
        }
        if (out && n + 1 < cap) out[n++] = *s->p;
        s->p++;
    }
    if (s->p >= s->end) return 0;
    s->p++;
    if (out) out[n] = 0;
    return 1;
}

/* Skips one value of any kind (strings, literals, numbers, arrays, objects). */
static int skip_value(scan_t *s) {
    int depth = 0;
    skip_ws(s);
    do {
        if (s->p >= s->end) return 0;
        if (*s->p == '"') {
            if (!read_string(s, NULL, 0)) return 0;
        } else {
            if (*s->p == '{' || *s->p == '[') depth++;
            if (*s->p == '}' || *s->p == ']') depth--;
            s->p++;
        }
        skip_ws(s);
    } while (depth > 0 || (s->p < s->end && *s->p != ',' && *s->p != '}' && *s->p != ']'));
    return 1;
}

static int parse_entry(scan_t *s, entry_t *e) {
    char key[64];
    memset(e, 0, sizeof *e);
    skip_ws(s);
    if (s->p >= s->end || *s->p != '{') return 0;
    s->p++;
    for (;;) {
        skip_ws(s);
        if (s->p < s->end && *s->p == '}') {
            s->p++;
            return e->path[0] != 0;
        }
        if (!read_string(s, key, sizeof key)) return 0;
        skip_ws(s);
        if (s->p >= s->end || *s->p != ':') return 0;
        s->p++;
        skip_ws(s);
        if (strcmp(key, "path") == 0) {
            if (!read_string(s, e->path, sizeof e->path)) return 0;
        } else if (strcmp(key, "format") == 0) {
            if (!read_string(s, e->format, sizeof e->format)) return 0;
        } else if (strcmp(key, "rule") == 0 && s->p < s->end && *s->p == '"') {
            if (!read_string(s, e->rule, sizeof e->rule)) return 0;
        } else if (strcmp(key, "valid") == 0) {
            e->valid = s->end - s->p >= 4 && strncmp(s->p, "true", 4) == 0;
            if (!skip_value(s)) return 0;
        } else if (!skip_value(s)) {
            return 0;
        }
        skip_ws(s);
        if (s->p < s->end && *s->p == ',') s->p++;
    }
}

/* Reads the manifest's entries; returns their count (0 on a parse error). */
static size_t read_manifest(const char *path, entry_t **out) {
    bytes_t b = read_file(path);
    scan_t s;
    size_t n = 0, cap = 0;
    entry_t *list = NULL;
    const char *files;
    *out = NULL;
    if (!b.data) return 0;
    s.p = (const char *)b.data;
    s.end = s.p + b.len;
    for (files = s.p; files + 7 <= s.end && memcmp(files, "\"files\"", 7) != 0; files++) {
    }
    if (files + 7 > s.end) {
        free(b.data);
        return 0;
    }
    s.p = files + 7;
    skip_ws(&s);
    if (s.p < s.end && *s.p == ':') s.p++;
    skip_ws(&s);
    if (s.p < s.end && *s.p == '[') s.p++;
    for (;;) {
        entry_t e;
        skip_ws(&s);
        if (s.p >= s.end || *s.p == ']') break;
        if (!parse_entry(&s, &e)) {
            n = 0;
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            list = (entry_t *)realloc(list, cap * sizeof *list);
            if (!list) return 0;
        }
        list[n++] = e;
        skip_ws(&s);
        if (s.p < s.end && *s.p == ',') s.p++;
    }
    free(b.data);
    *out = list;
    return n;
}

/* --- hrry export ---------------------------------------------------------- */

/* Runs `hrry export FILE NAME -o OUT`; returns its exit status (-1 if it could
 * not run). */
static int run_export(const char *file, const char *name, const char *out) {
    char *argv[7];
    pid_t pid;
    int status = 0;
    posix_spawn_file_actions_t actions;
    argv[0] = hrry_bin;
    argv[1] = (char *)"export";
    argv[2] = (char *)file;
    argv[3] = (char *)name;
    argv[4] = (char *)"-o";
    argv[5] = (char *)out;
    argv[6] = NULL;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    if (posix_spawn(&pid, hrry_bin, &actions, NULL, argv, environ) != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return -1;
    }
    posix_spawn_file_actions_destroy(&actions);
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

/* The data of a version 1.0 .npy file (after its header); data NULL if malformed. */
static bytes_t npy_data(const bytes_t *npy) {
    bytes_t d = {NULL, 0};
    size_t header;
    if (npy->len < 10 || memcmp(npy->data, "\x93NUMPY\x01\x00", 8) != 0) return d;
    header = 10 + (size_t)npy->data[8] + ((size_t)npy->data[9] << 8);
    if (header > npy->len) return d;
    d.data = npy->data + header;
    d.len = npy->len - header;
    return d;
}

/* --- valid files ---------------------------------------------------------- */

static long exported, no_export;

/* Checks tensor i of f against `hrry export` of file `path`; bytes_f is the same
 * file opened from a copy of its bytes (range [lo, hi)). */
static void check_tensor(hrry_file *f, hrry_file *bytes_f, const unsigned char *lo,
                         const unsigned char *hi, const char *path, size_t i) {
    const char *name = NULL;
    size_t len = 0, index = 0;
    hrry_tensor_info info;
    uint64_t size = 0, product = 1;
    uint32_t b, r;
    int status;

    EXPECT_STATUS(hrry_tensor_name(f, i, &name, &len), HRRY_OK, "%s: name of %zu", path, i);
    if (!name) return;
    check(name[len] == 0, "%s: name %zu is NUL-terminated", path, i);
    EXPECT_STATUS(hrry_find(f, name, len, &index), HRRY_OK, "%s: find %s", path, name);
    check(index == i, "%s: find %s gives %zu, expected %zu", path, name, index, i);

    memset(&info, 0, sizeof info);
    EXPECT_STATUS(hrry_tensor_info_get(f, i, &info), HRRY_OK, "%s: info %s", path, name);
    for (r = 0; r < info.rank; r++) product *= info.shape[r];
    check(info.rank == 0 ? info.shape == NULL : info.shape != NULL, "%s: %s shape pointer", path,
          name);
    check(product == info.element_count, "%s: %s element count %llu, shape product %llu", path,
          name, (unsigned long long)info.element_count, (unsigned long long)product);

    for (b = 0; b < info.buffer_count; b++) {
        const uint8_t *data = NULL, *data2 = NULL;
        uint64_t blen = 0, blen2 = 0;
        EXPECT_STATUS(hrry_tensor_buffer(f, i, b, &data, &blen), HRRY_OK, "%s: %s buffer %u", path,
                      name, b);
        EXPECT_STATUS(hrry_tensor_buffer(bytes_f, i, b, &data2, &blen2), HRRY_OK,
                      "%s: %s buffer %u (bytes)", path, name, b);
        check(blen == blen2 && (blen == 0 || memcmp(data, data2, (size_t)blen) == 0),
              "%s: %s buffer %u same from path and bytes", path, name, b);
        check(data2 >= lo && data2 + blen2 <= hi, "%s: %s buffer %u borrowed from the caller's bytes",
              path, name, b);
    }
    {
        const uint8_t *data = (const uint8_t *)GARBAGE;
        uint64_t blen = 7;
        EXPECT_STATUS(hrry_tensor_buffer(f, i, info.buffer_count, &data, &blen), HRRY_NOT_FOUND,
                      "%s: %s buffer past the table", path, name);
        check(data == NULL && blen == 0, "%s: failed hrry_tensor_buffer resets its outputs", path);
    }

    status = hrry_row_major_size(f, i, &size);
    if (strlen(name) != len) {
        /* A name holding a NUL cannot be passed to the CLI. */
        return;
    }
    {
        char out[4096];
        int code;
        snprintf(out, sizeof out, "%s/export.npy", work_dir);
        remove(out);
        code = run_export(path, name, out);
        if (code != 0) {
            /* No export: the ABI refuses too, as unsupported (the file is valid). */
            no_export++;
            if (status == HRRY_OK) {
                unsigned char *got = (unsigned char *)malloc(size ? (size_t)size : 1);
                status = hrry_read_row_major(f, i, got, size);
                free(got);
            }
            EXPECT_STATUS(status, HRRY_UNSUPPORTED, "%s: %s: hrry export exits %d; row-major read",
                          path, name, code);
            return;
        }
        EXPECT_STATUS(status, HRRY_OK, "%s: row-major size of %s", path, name);
        if (status == HRRY_OK) {
            bytes_t npy = read_file(out);
            bytes_t want = npy_data(&npy);
            unsigned char *got = (unsigned char *)malloc(size ? (size_t)size : 1);
            unsigned char *got2 = (unsigned char *)malloc(size ? (size_t)size : 1);
            check(want.data != NULL, "%s: %s: export wrote a .npy", path, name);
            check(want.len == size, "%s: %s: export has %zu data bytes, size says %llu", path, name,
                  want.len, (unsigned long long)size);
            EXPECT_STATUS(hrry_read_row_major(f, i, got, size), HRRY_OK, "%s: read %s", path, name);
            EXPECT_STATUS(hrry_read_row_major(bytes_f, i, got2, size), HRRY_OK, "%s: read %s (bytes)",
                          path, name);
            check(want.data && want.len == size && memcmp(got, want.data, (size_t)size) == 0,
                  "%s: %s: row-major bytes equal hrry export's", path, name);
            check(memcmp(got, got2, (size_t)size) == 0, "%s: %s: same from path and bytes", path,
                  name);
            EXPECT_STATUS(hrry_read_row_major(f, i, got, size + 1), HRRY_ARGUMENT,
                          "%s: %s: len one too many", path, name);
            if (size > 0) {
                EXPECT_STATUS(hrry_read_row_major(f, i, got, size - 1), HRRY_ARGUMENT,
                              "%s: %s: len one short", path, name);
                EXPECT_STATUS(hrry_read_row_major(f, i, NULL, size), HRRY_ARGUMENT,
                              "%s: %s: NULL out", path, name);
            }
            if (info.is_quantized) {
                size_t n = (size_t)info.element_count;
                float *values = (float *)malloc((n ? n : 1) * sizeof(float));
                EXPECT_STATUS(hrry_dequantize(f, i, values, info.element_count), HRRY_OK,
                              "%s: dequantize %s", path, name);
                check(size == n * sizeof(float) && memcmp(values, got, (size_t)size) == 0,
                      "%s: %s: dequantized values equal the exported float32", path, name);
                EXPECT_STATUS(hrry_dequantize(f, i, values, info.element_count + 1), HRRY_ARGUMENT,
                              "%s: %s: count one too many", path, name);
                free(values);
            } else {
                float value;
                EXPECT_STATUS(hrry_dequantize(f, i, &value, info.element_count), HRRY_UNSUPPORTED,
                              "%s: dequantize plain %s", path, name);
            }
            exported++;
            free(got);
            free(got2);
            free(npy.data);
        }
    }
}

static void check_valid_hrry(const char *path) {
    hrry_file *f = (hrry_file *)GARBAGE, *bf = (hrry_file *)GARBAGE;
    hrry_report *r = NULL;
    bytes_t b = read_file(path);
    size_t n, i;

    check(b.data != NULL, "%s: readable", path);
    EXPECT_STATUS(hrry_open(path, &f), HRRY_OK, "%s: open", path);
    EXPECT_STATUS(hrry_open_bytes(b.data, b.len, &bf), HRRY_OK, "%s: open bytes", path);
    if (!f || !bf || f == GARBAGE || bf == GARBAGE) {
        free(b.data);
        return;
    }
    EXPECT_STATUS(hrry_validate_path(path, 0, &r), HRRY_OK, "%s: validate", path);
    check(hrry_report_valid(r) == 1 && hrry_report_count(r) == 0, "%s: valid report", path);
    hrry_report_free(r);

    n = hrry_tensor_count(f);
    check(n == hrry_tensor_count(bf), "%s: same count from path and bytes", path);
    for (i = 0; i < n; i++) check_tensor(f, bf, b.data, b.data + b.len, path, i);

    {
        const char *name = (const char *)GARBAGE;
        hrry_tensor_info info;
        uint64_t size = 0;
        float value;
        unsigned char byte;
        EXPECT_STATUS(hrry_tensor_name(f, n, &name, NULL), HRRY_NOT_FOUND, "%s: name past end", path);
        check(name == NULL, "%s: failed hrry_tensor_name resets *name", path);
        EXPECT_STATUS(hrry_tensor_info_get(f, n, &info), HRRY_NOT_FOUND, "%s: info past end", path);
        EXPECT_STATUS(hrry_row_major_size(f, n, &size), HRRY_NOT_FOUND, "%s: size past end", path);
        EXPECT_STATUS(hrry_read_row_major(f, n, &byte, 1), HRRY_NOT_FOUND, "%s: read past end", path);
        EXPECT_STATUS(hrry_dequantize(f, n, &value, 1), HRRY_NOT_FOUND, "%s: dequantize past end",
                      path);
        EXPECT_STATUS(hrry_dequantize(f, SIZE_MAX, &value, 1), HRRY_NOT_FOUND,
                      "%s: dequantize SIZE_MAX", path);
    }
    hrry_close(f);
    hrry_close(bf);
    free(b.data);
}

/* --- invalid files --------------------------------------------------------- */

static void check_invalid(const char *path, const char *rule, int is_hrry) {
    hrry_file *f = (hrry_file *)GARBAGE;
    hrry_report *r = (hrry_report *)GARBAGE;
    char needle[128];
    bytes_t b = read_file(path);
    size_t k, n;

    if (is_hrry) {
        EXPECT_STATUS(hrry_open(path, &f), HRRY_INVALID, "%s: open", path);
        snprintf(needle, sizeof needle, ": %s at offset ", rule);
        check(strstr(hrry_last_error(), needle) != NULL, "%s: open names rule %s", path, rule);
    } else {
        /* Another format (by magic or name) is not read further: validate says why. */
        EXPECT_STATUS(hrry_open(path, &f), HRRY_UNSUPPORTED, "%s: open another format", path);
    }
    check(f == NULL, "%s: failed open resets *out", path);

    if (b.data) {
        f = (hrry_file *)GARBAGE;
        /* Bytes have no name: another format is recognised by its magic only. */
        if (is_hrry) {
            EXPECT_STATUS(hrry_open_bytes(b.data, b.len, &f), HRRY_INVALID, "%s: open bytes", path);
        } else {
            int status = hrry_open_bytes(b.data, b.len, &f);
            check(status == HRRY_INVALID || status == HRRY_UNSUPPORTED,
                  "%s: open bytes of another format gives %s", path, hrry_status_name(status));
        }
        check(f == NULL, "%s: failed open_bytes resets *out", path);
        /* Bytes have no file name: an archive whose magic is broken cannot be told
         * from a broken HRRYFILE, so only a HRRYFILE's rule is certain. */
        /* The rule first; a refusal by policy says so first ("refused by the
         * hardening policy (not a spec violation): RULE at offset …"). */
        snprintf(needle, sizeof needle, "%s at offset ", rule);
        check(!is_hrry || strncmp(hrry_last_error(), needle, strlen(needle)) == 0
                  || (strncmp(hrry_last_error(), "refused by ", 11) == 0
                      && strstr(hrry_last_error(), needle) != NULL),
              "%s: open_bytes message starts with %s", path, rule);
    }

    EXPECT_STATUS(hrry_validate_path(path, 0, &r), HRRY_OK, "%s: validate", path);
    n = hrry_report_count(r);
    check(hrry_report_valid(r) == 0 && n >= 1, "%s: report is invalid", path);
    for (k = 0; k < n; k++) {
        const char *id = NULL, *message = NULL;
        uint64_t offset = UINT64_MAX;
        EXPECT_STATUS(hrry_report_violation(r, k, &id, &offset, &message), HRRY_OK,
                      "%s: violation %zu", path, k);
        check(id && strcmp(id, rule) == 0, "%s: violation %zu is %s, expected %s only", path, k,
              id ? id : "(null)", rule);
        check(message && message[0] != 0 && offset != UINT64_MAX, "%s: violation %zu has a message",
              path, k);
    }
    {
        const char *id = (const char *)GARBAGE;
        EXPECT_STATUS(hrry_report_violation(r, n, &id, NULL, NULL), HRRY_NOT_FOUND,
                      "%s: violation past the end", path);
        check(id == NULL, "%s: failed hrry_report_violation resets *rule", path);
    }
    hrry_report_free(r);
    if (b.data) {
        r = NULL;
        EXPECT_STATUS(hrry_validate_bytes(b.data, b.len, 0, &r), HRRY_OK, "%s: validate bytes", path);
        check(hrry_report_valid(r) == 0, "%s: bytes are invalid", path);
        check(!is_hrry || hrry_report_count(r) == n, "%s: same report from path and bytes", path);
        hrry_report_free(r);
    }
    free(b.data);
}

/* --- arguments ------------------------------------------------------------- */

static void check_arguments(void) {
    char path[4096];
    hrry_file *f = NULL, *g = (hrry_file *)GARBAGE;
    hrry_report *r = (hrry_report *)GARBAGE;
    bytes_t b;
    size_t cut, index = 0, len = 0;
    const char *name = NULL;
    hrry_tensor_info info;
    const uint8_t *data = NULL;
    uint64_t blen = 0;
    float values[64];

    snprintf(path, sizeof path, "%s/valid/quant-per-tensor-int8.hrry", corpus_dir);
    b = read_file(path);
    check(b.data != NULL, "%s: readable", path);
    if (!b.data) return;
    EXPECT_STATUS(hrry_open(path, &f), HRRY_OK, "open %s", path);

    /* NULL pointers. */
    EXPECT_STATUS(hrry_open(NULL, &g), HRRY_ARGUMENT, "open(NULL)");
    check(g == NULL, "open(NULL) resets *out");
    EXPECT_STATUS(hrry_open(path, NULL), HRRY_ARGUMENT, "open(path, NULL)");
    EXPECT_STATUS(hrry_open("", &g), HRRY_ARGUMENT, "open(\"\")");
    EXPECT_STATUS(hrry_open("/nonexistent/none.hrry", &g), HRRY_IO, "open(missing)");
    check(g == NULL, "open(missing) resets *out");
    check(hrry_last_error()[0] != 0, "a failure leaves a message");
    EXPECT_STATUS(hrry_open(corpus_dir, &g), HRRY_IO, "open(a directory)");
    EXPECT_STATUS(hrry_open_bytes(NULL, b.len, &g), HRRY_ARGUMENT, "open_bytes(NULL)");
    EXPECT_STATUS(hrry_open_bytes(b.data, b.len, NULL), HRRY_ARGUMENT, "open_bytes(out NULL)");
    EXPECT_STATUS(hrry_open_bytes(b.data, 0, &g), HRRY_ARGUMENT, "open_bytes(len 0)");
    EXPECT_STATUS(hrry_tensor_name(NULL, 0, &name, &len), HRRY_ARGUMENT, "tensor_name(NULL)");
    EXPECT_STATUS(hrry_tensor_name(f, 0, NULL, &len), HRRY_ARGUMENT, "tensor_name(name NULL)");
    EXPECT_STATUS(hrry_tensor_name(f, 0, &name, NULL), HRRY_OK, "tensor_name(len NULL)");
    EXPECT_STATUS(hrry_find(NULL, "x", 1, &index), HRRY_ARGUMENT, "find(NULL)");
    EXPECT_STATUS(hrry_find(f, NULL, 1, &index), HRRY_ARGUMENT, "find(name NULL)");
    EXPECT_STATUS(hrry_find(f, "x", 0, &index), HRRY_ARGUMENT, "find(len 0)");
    EXPECT_STATUS(hrry_find(f, "x", 1, NULL), HRRY_ARGUMENT, "find(index NULL)");
    EXPECT_STATUS(hrry_find(f, "\xff", 1, &index), HRRY_ARGUMENT, "find(not UTF-8)");
    EXPECT_STATUS(hrry_find(f, "no such tensor", 14, &index), HRRY_NOT_FOUND, "find(unknown)");
    check(index == SIZE_MAX, "failed find sets SIZE_MAX");
    EXPECT_STATUS(hrry_tensor_info_get(NULL, 0, &info), HRRY_ARGUMENT, "info(NULL)");
    EXPECT_STATUS(hrry_tensor_info_get(f, 0, NULL), HRRY_ARGUMENT, "info(out NULL)");
    EXPECT_STATUS(hrry_tensor_buffer(NULL, 0, 0, &data, &blen), HRRY_ARGUMENT, "buffer(NULL)");
    EXPECT_STATUS(hrry_tensor_buffer(f, 0, 0, NULL, &blen), HRRY_ARGUMENT, "buffer(data NULL)");
    EXPECT_STATUS(hrry_tensor_buffer(f, 0, 0, &data, NULL), HRRY_ARGUMENT, "buffer(len NULL)");
    EXPECT_STATUS(hrry_row_major_size(NULL, 0, &blen), HRRY_ARGUMENT, "row_major_size(NULL)");
    EXPECT_STATUS(hrry_row_major_size(f, 0, NULL), HRRY_ARGUMENT, "row_major_size(len NULL)");
    EXPECT_STATUS(hrry_read_row_major(NULL, 0, values, 4), HRRY_ARGUMENT, "read_row_major(NULL)");
    EXPECT_STATUS(hrry_dequantize(NULL, 0, values, 6), HRRY_ARGUMENT, "dequantize(NULL)");
    EXPECT_STATUS(hrry_tensor_info_get(f, 0, &info), HRRY_OK, "info");
    if (info.element_count <= 63) {
        EXPECT_STATUS(hrry_dequantize(f, 0, NULL, info.element_count), HRRY_ARGUMENT,
                      "dequantize(out NULL)");
        EXPECT_STATUS(hrry_dequantize(f, 0, values, info.element_count - 1), HRRY_ARGUMENT,
                      "dequantize(count short)");
        EXPECT_STATUS(hrry_dequantize(f, 0, values, 0), HRRY_ARGUMENT, "dequantize(count 0)");
        EXPECT_STATUS(hrry_dequantize(f, 0, (float *)((char *)values + 1), info.element_count),
                      HRRY_ARGUMENT, "dequantize(misaligned out)");
        EXPECT_STATUS(hrry_dequantize(f, 0, values, info.element_count), HRRY_OK, "dequantize");
    }
    EXPECT_STATUS(hrry_validate_path(NULL, 0, &r), HRRY_ARGUMENT, "validate_path(NULL)");
    check(r == NULL, "validate_path(NULL) resets *out");
    EXPECT_STATUS(hrry_validate_path(path, 0, NULL), HRRY_ARGUMENT, "validate_path(out NULL)");
    r = (hrry_report *)GARBAGE;
    EXPECT_STATUS(hrry_validate_path("/nonexistent/none.hrry", 0, &r), HRRY_IO,
                  "validate_path(missing)");
    check(r == NULL, "validate_path(missing) resets *out");
    EXPECT_STATUS(hrry_validate_bytes(NULL, 4, 0, &r), HRRY_ARGUMENT, "validate_bytes(NULL)");
    EXPECT_STATUS(hrry_validate_bytes(b.data, 0, 0, &r), HRRY_ARGUMENT, "validate_bytes(len 0)");
    EXPECT_STATUS(hrry_validate_bytes(b.data, b.len, 1, NULL), HRRY_ARGUMENT,
                  "validate_bytes(out NULL)");
    EXPECT_STATUS(hrry_report_violation(NULL, 0, NULL, NULL, NULL), HRRY_ARGUMENT,
                  "report_violation(NULL)");
    check(hrry_tensor_count(NULL) == 0, "tensor_count(NULL) is 0");
    check(hrry_report_count(NULL) == 0, "report_count(NULL) is 0");
    check(hrry_report_valid(NULL) == 0, "report_valid(NULL) is 0");
    hrry_close(NULL);
    hrry_report_free(NULL);

    /* Truncated buffers: every prefix, each in an exact-size allocation. */
    for (cut = 1; cut < b.len; cut++) {
        unsigned char *prefix = (unsigned char *)malloc(cut);
        memcpy(prefix, b.data, cut);
        g = (hrry_file *)GARBAGE;
        EXPECT_STATUS(hrry_open_bytes(prefix, cut, &g), HRRY_INVALID, "open_bytes(first %zu bytes)",
                      cut);
        check(g == NULL, "open_bytes(first %zu bytes) resets *out", cut);
        if (g && g != GARBAGE) hrry_close(g);
        free(prefix);
    }

    /* Versions. */
    check(hrry_abi_version() == HRRY_ABI_VERSION, "ABI version matches the header");
    check(strlen(hrry_version()) > 0, "version string");
    check(strcmp(hrry_status_name(HRRY_NOT_FOUND), "HRRY_NOT_FOUND") == 0, "status name");

    hrry_close(f);
    free(b.data);
}

/* --- threads ---------------------------------------------------------------- */

#define THREADS 8
#define ROUNDS 50

typedef struct {
    hrry_file *f;
    size_t count;
    unsigned char **want; /* row-major bytes per tensor */
    uint64_t *sizes;
    size_t quantized;     /* a quantized tensor's index */
    const uint64_t *shape; /* out: the shape pointer tensor 0 reported */
    long mismatches;
    char error[256];       /* out: this thread's last error after its own failure */
} job_t;

static void *reader(void *arg) {
    job_t *job = (job_t *)arg;
    int round;
    size_t i;
    hrry_tensor_info info;
    memset(&info, 0, sizeof info);
    if (hrry_tensor_info_get(job->f, 0, &info) != HRRY_OK) job->mismatches++;
    job->shape = info.shape;
    for (round = 0; round < ROUNDS; round++) {
        for (i = 0; i < job->count; i++) {
            unsigned char *got = (unsigned char *)malloc(job->sizes[i] ? (size_t)job->sizes[i] : 1);
            if (hrry_read_row_major(job->f, i, got, job->sizes[i]) != HRRY_OK ||
                memcmp(got, job->want[i], (size_t)job->sizes[i]) != 0)
                job->mismatches++;
            free(got);
        }
        {
            size_t q = job->quantized;
            size_t n = (size_t)(job->sizes[q] / sizeof(float));
            float *values = (float *)malloc(n * sizeof(float));
            if (hrry_dequantize(job->f, q, values, n) != HRRY_OK ||
                memcmp(values, job->want[q], n * sizeof(float)) != 0)
                job->mismatches++;
            free(values);
        }
    }
    /* The last error is per thread: a fresh thread starts with none. */
    if (hrry_last_error()[0] != 0) job->mismatches++;
    hrry_find(job->f, "thread-only", 11, &i);
    snprintf(job->error, sizeof job->error, "%s", hrry_last_error());
    return NULL;
}

static void check_threads(void) {
    char path[4096];
    hrry_file *f = NULL;
    job_t jobs[THREADS];
    pthread_t threads[THREADS];
    size_t i, count, quantized = SIZE_MAX;
    unsigned char **want;
    uint64_t *sizes;
    int t;
    char mine[256];

    snprintf(path, sizeof path, "%s/valid/quant-per-block-int4-f16.hrry", corpus_dir);
    EXPECT_STATUS(hrry_open(path, &f), HRRY_OK, "open %s", path);
    if (!f) return;
    count = hrry_tensor_count(f);
    want = (unsigned char **)calloc(count ? count : 1, sizeof *want);
    sizes = (uint64_t *)calloc(count ? count : 1, sizeof *sizes);
    /* Reference bytes from a second handle, so that the threads are the first to
     * ask the shared handle for shapes. */
    {
        hrry_file *ref = NULL;
        hrry_open(path, &ref);
        for (i = 0; i < count; i++) {
            hrry_tensor_info info;
            hrry_row_major_size(ref, i, &sizes[i]);
            want[i] = (unsigned char *)malloc(sizes[i] ? (size_t)sizes[i] : 1);
            hrry_read_row_major(ref, i, want[i], sizes[i]);
            if (hrry_tensor_info_get(ref, i, &info) == HRRY_OK && info.is_quantized) quantized = i;
        }
        hrry_close(ref);
    }
    check(quantized != SIZE_MAX, "%s has a quantized tensor", path);
    if (quantized == SIZE_MAX) return;

    hrry_find(f, "main-only", 9, &i);
    snprintf(mine, sizeof mine, "%s", hrry_last_error());
    for (t = 0; t < THREADS; t++) {
        memset(&jobs[t], 0, sizeof jobs[t]);
        jobs[t].f = f;
        jobs[t].count = count;
        jobs[t].want = want;
        jobs[t].sizes = sizes;
        jobs[t].quantized = quantized;
        check(pthread_create(&threads[t], NULL, reader, &jobs[t]) == 0, "start thread %d", t);
    }
    for (t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        check(jobs[t].mismatches == 0, "thread %d: %ld reads disagree", t, jobs[t].mismatches);
        check(jobs[t].shape == jobs[0].shape && jobs[t].shape != NULL,
              "thread %d sees the same shape array", t);
        check(strstr(jobs[t].error, "thread-only") != NULL, "thread %d has its own last error", t);
    }
    check(strcmp(mine, hrry_last_error()) == 0 && strstr(mine, "main-only") != NULL,
          "the threads left the main thread's last error alone");
    for (i = 0; i < count; i++) free(want[i]);
    free(want);
    free(sizes);
    hrry_close(f);
}

/* --- names and KV metadata ------------------------------------------------- */

/* Type and layout names, and every KV value of kv_all_types.hrry by its typed
   getter and as text. */
static void check_names_and_kv(void) {
    char path[4096];
    hrry_file *f = NULL;
    const char *key = (const char *)GARBAGE, *text = NULL;
    const uint8_t *data = NULL;
    size_t len = 0, i;
    uint8_t type = 0;
    int64_t i64 = 0;
    uint64_t u64 = 0;
    double f64 = 0;
    int b = 0;
    static const struct {
        const char *key;
        uint8_t type;
        const char *text;
    } want[] = {
        {"string", HRRY_KV_STRING, "text"},
        {"int64", HRRY_KV_INT64, "-7"},
        {"uint64", HRRY_KV_UINT64, "18446744073709551615"},
        {"float64", HRRY_KV_FLOAT64, "0.25"},
        {"bool", HRRY_KV_BOOL, "true"},
        {"bytes", HRRY_KV_BYTES, "0001ff"},
        {"array", HRRY_KV_ARRAY, "[1, -2]"},
        {"strings", HRRY_KV_ARRAY, "[\"a\"]"},
    };

    check(strcmp(hrry_element_type_name(0x03), "float32") == 0, "type name of 0x03");
    check(strcmp(hrry_element_type_name(0x01), "float16") == 0, "type name of 0x01");
    check(hrry_element_type_name(0xEE) == NULL, "no name for an undefined type tag");
    check(strcmp(hrry_layout_name(0x01), "row-major") == 0, "layout name of 0x01");
    check(strcmp(hrry_layout_name(0x07), "csr") == 0, "layout name of 0x07");
    check(hrry_layout_name(0x30) == NULL, "no name for an undefined layout tag");
    check(strcmp(hrry_kv_type_name(HRRY_KV_ARRAY), "array") == 0, "KV type name");
    check(hrry_kv_type_name(0) == NULL, "no name for KV tag 0");

    snprintf(path, sizeof path, "%s/valid/kv_all_types.hrry", corpus_dir);
    EXPECT_STATUS(hrry_open(path, &f), HRRY_OK, "open %s", path);
    if (!f) return;
    check(hrry_kv_count(f) == sizeof want / sizeof want[0], "KV count %zu", hrry_kv_count(f));
    check(hrry_kv_count(NULL) == 0, "KV count of NULL");
    for (i = 0; i < sizeof want / sizeof want[0]; i++) {
        EXPECT_STATUS(hrry_kv_key(f, i, &key, &len), HRRY_OK, "KV key %zu", i);
        check(key && strcmp(key, want[i].key) == 0 && len == strlen(want[i].key), "KV key %zu is %s",
              i, want[i].key);
        EXPECT_STATUS(hrry_kv_type(f, i, &type), HRRY_OK, "KV type %zu", i);
        check(type == want[i].type, "KV %s type %u", want[i].key, type);
        EXPECT_STATUS(hrry_kv_text(f, i, &text, &len), HRRY_OK, "KV text %zu", i);
        check(text && strcmp(text, want[i].text) == 0 && len == strlen(want[i].text),
              "KV %s as text: %s", want[i].key, text ? text : "(null)");
    }
    EXPECT_STATUS(hrry_kv_int64(f, 1, &i64), HRRY_OK, "kv_int64");
    check(i64 == -7, "int64 value");
    EXPECT_STATUS(hrry_kv_uint64(f, 2, &u64), HRRY_OK, "kv_uint64");
    check(u64 == UINT64_MAX, "uint64 value");
    EXPECT_STATUS(hrry_kv_float64(f, 3, &f64), HRRY_OK, "kv_float64");
    check(f64 == 0.25, "float64 value");
    EXPECT_STATUS(hrry_kv_bool(f, 4, &b), HRRY_OK, "kv_bool");
    check(b == 1, "bool value");
    EXPECT_STATUS(hrry_kv_bytes(f, 0, &data, &len), HRRY_OK, "kv_bytes of a string");
    check(data && len == 4 && memcmp(data, "text", 4) == 0, "string bytes");
    EXPECT_STATUS(hrry_kv_bytes(f, 5, &data, &len), HRRY_OK, "kv_bytes");
    check(data && len == 3 && data[0] == 0x00 && data[2] == 0xff, "bytes value");
    /* The wrong getter, an index past the end, NULL arguments. */
    i64 = 5;
    EXPECT_STATUS(hrry_kv_int64(f, 0, &i64), HRRY_UNSUPPORTED, "kv_int64 of a string");
    check(i64 == 0, "a failed getter zeroes its output");
    check(strstr(hrry_last_error(), "string") != NULL, "the message names the stored type");
    EXPECT_STATUS(hrry_kv_bytes(f, 1, &data, &len), HRRY_UNSUPPORTED, "kv_bytes of an int");
    check(data == NULL && len == 0, "a failed kv_bytes resets its outputs");
    key = (const char *)GARBAGE;
    EXPECT_STATUS(hrry_kv_key(f, 8, &key, &len), HRRY_NOT_FOUND, "KV key past the end");
    check(key == NULL, "a failed kv_key resets *key");
    EXPECT_STATUS(hrry_kv_text(f, 99, &text, NULL), HRRY_NOT_FOUND, "KV text past the end");
    EXPECT_STATUS(hrry_kv_key(NULL, 0, &key, &len), HRRY_ARGUMENT, "kv_key(NULL)");
    EXPECT_STATUS(hrry_kv_type(f, 0, NULL), HRRY_ARGUMENT, "kv_type(out NULL)");
    EXPECT_STATUS(hrry_kv_text(f, 0, NULL, &len), HRRY_ARGUMENT, "kv_text(text NULL)");
    EXPECT_STATUS(hrry_kv_float64(f, 3, NULL), HRRY_ARGUMENT, "kv_float64(out NULL)");
    hrry_close(f);
}

/* --- main ------------------------------------------------------------------- */

int main(int argc, char **argv) {
    char manifest[4096];
    entry_t *entries = NULL;
    size_t n, k, valid_hrry = 0, invalid = 0;

    if (argc != 4) {
        fprintf(stderr, "usage: %s CORPUS_DIR HRRY_BINARY WORK_DIR\n", argv[0]);
        return 2;
    }
    corpus_dir = argv[1];
    hrry_bin = argv[2];
    work_dir = argv[3];
    snprintf(manifest, sizeof manifest, "%s/manifest.json", corpus_dir);
    n = read_manifest(manifest, &entries);
    check(n > 0, "%s parses", manifest);

    for (k = 0; k < n; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", corpus_dir, entries[k].path);
        if (!entries[k].valid) {
            check(entries[k].rule[0] != 0, "%s: manifest names a rule", path);
            check_invalid(path, entries[k].rule, strcmp(entries[k].format, "hrryfile") == 0);
            invalid++;
        } else if (strcmp(entries[k].format, "hrryfile") == 0) {
            check_valid_hrry(path);
            valid_hrry++;
        } else {
            hrry_file *f = (hrry_file *)GARBAGE;
            hrry_report *r = NULL;
            /* A .holo, a bare stream or a message capture is a format the C API
               does not open (recognised by magic or name); each validates. */
            EXPECT_STATUS(hrry_open(path, &f), HRRY_UNSUPPORTED, "%s: open a %s", path,
                          entries[k].format);
            check(f == NULL, "%s: refused open resets *out", path);
            EXPECT_STATUS(hrry_validate_path(path, 0, &r), HRRY_OK, "%s: validate", path);
            check(hrry_report_valid(r) == 1, "%s: valid archive", path);
            hrry_report_free(r);
        }
    }
    free(entries);
    check(valid_hrry > 10 && invalid > 100, "the manifest lists the corpus (%zu valid, %zu invalid)",
          valid_hrry, invalid);
    check(exported > 50, "%ld tensors compared with hrry export", exported);

    check_arguments();
    check_names_and_kv();
    check_threads();

    printf("corpus: %zu valid HRRYFILEs, %zu invalid files; %ld tensors compared with hrry "
           "export, %ld without an export\n",
           valid_hrry, invalid, exported, no_export);
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
