/*
 * A conformance testee over the C ABI: speaks the JSON Lines protocol of
 * docs/conformance-protocol.md (version 1) on standard input and output, for
 *
 *     hrry conformance -- ./conformance_testee
 *
 * It shows what an implementer in C writes: a loop that reads a request line, picks
 * out "op", "id" and "path", and prints one answer line.
 *  - validate: hrry_validate_path (strict), the rule IDs of the report;
 *  - read: hrry_open, then per tensor its type name, shape and the SHA-256 of its
 *    dense row-major bytes where hrry_read_row_major gives the stored encoding (the
 *    types it does not widen), and of the dequantized values of a quantized tensor.
 *    Other hashes are left out, as the protocol allows.
 * The requests come from the harness, so the JSON reading is minimal: string values
 * with the escapes JSON allows, integer ids.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hrry.h>

/* ---- SHA-256 (FIPS 180-4) ---- */

typedef struct {
    uint32_t h[8];
    uint8_t block[64];
    size_t fill;
    uint64_t total;
} sha256;

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(sha256 *s, const uint8_t *p) {
    uint32_t w[64], v[8];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(v, s->h, sizeof v);
    for (int i = 0; i < 64; i++) {
        uint32_t e = v[4], a = v[0];
        uint32_t t1 = v[7] + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & v[5]) ^ (~e & v[6])) +
                      K[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & v[1]) ^ (a & v[2]) ^ (v[1] & v[2]));
        memmove(v + 1, v, 7 * sizeof v[0]);
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++) s->h[i] += v[i];
}

static void sha256_init(sha256 *s) {
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->fill = 0;
    s->total = 0;
}

static void sha256_update(sha256 *s, const uint8_t *p, size_t n) {
    s->total += n;
    while (n > 0) {
        size_t take = 64 - s->fill < n ? 64 - s->fill : n;
        memcpy(s->block + s->fill, p, take);
        s->fill += take;
        p += take;
        n -= take;
        if (s->fill == 64) {
            sha256_block(s, s->block);
            s->fill = 0;
        }
    }
}

/* Writes the digest as 64 hex digits and a NUL into out. */
static void sha256_hex(sha256 *s, char out[65]) {
    uint64_t bits = s->total * 8;
    uint8_t pad = 0x80, zero = 0, len[8];
    sha256_update(s, &pad, 1);
    while (s->fill != 56) sha256_update(s, &zero, 1);
    for (int i = 0; i < 8; i++) len[i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_update(s, len, 8);
    for (int i = 0; i < 8; i++) snprintf(out + 8 * i, 9, "%08x", (unsigned)s->h[i]);
}

static void hash_bytes(const void *p, size_t n, char out[65]) {
    sha256 s;
    sha256_init(&s);
    sha256_update(&s, p, n);
    sha256_hex(&s, out);
}

/* ---- element types (element-types.md tags, names as `hrry inspect --json`) ---- */

static const struct {
    uint8_t tag;
    const char *name;
    int exported_as_stored; /* hrry_read_row_major gives the stored encoding */
} TYPES[] = {
    {0x01, "float16", 1},     {0x02, "bfloat16", 0},    {0x03, "float32", 1},
    {0x04, "float64", 1},     {0x10, "int8", 1},        {0x11, "uint8", 1},
    {0x12, "int16", 1},       {0x13, "uint16", 1},      {0x14, "int32", 1},
    {0x15, "uint32", 1},      {0x16, "int64", 1},       {0x17, "uint64", 1},
    {0x20, "bool", 0},        {0x40, "float8_e4m3", 0}, {0x41, "float8_e5m2", 0},
    {0x42, "float8_e8m0", 0}, {0x43, "float4_e2m1", 0}, {0x44, "float6_e2m3", 0},
    {0x45, "float6_e3m2", 0}, {0x46, "float128", 0},    {0x48, "int4", 0},
    {0x49, "uint4", 0},       {0x4A, "int2", 0},        {0x4B, "uint2", 0},
    {0x50, "complex64", 1},   {0x51, "complex128", 1},
};

static int type_index(uint8_t tag) {
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (TYPES[i].tag == tag) return (int)i;
    return -1;
}

/* ---- minimal JSON ---- */

/* The string value of "key" in the object text, unescaped into out (at most cap
 * bytes with the NUL); 0 when absent or too long. */
static int json_string(const char *text, const char *key, char *out, size_t cap) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *p = text;
    while ((p = strstr(p, pattern)) != NULL) {
        if (p == text || p[-1] != '\\') break;
        p++;
    }
    if (p == NULL) return 0;
    p += strlen(pattern);
    while (*p == ' ') p++;
    if (*p++ != '"') return 0;
    size_t n = 0;
    while (*p && *p != '"') {
        char c = *p++;
        if (c == '\\') {
            c = *p++;
            switch (c) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                unsigned code;
                if (sscanf(p, "%4x", &code) != 1 || code > 0x7f) return 0; /* ASCII only */
                c = (char)code;
                p += 4;
                break;
            }
            case '\0': return 0;
            default: break; /* \" \\ \/ */
            }
        }
        if (n + 1 >= cap) return 0;
        out[n++] = c;
    }
    out[n] = '\0';
    return *p == '"';
}

/* The integer value of "key", or -1. */
static long long json_int(const char *text, const char *key) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *p = strstr(text, pattern);
    if (p == NULL) return -1;
    return strtoll(p + strlen(pattern), NULL, 10);
}

/* Prints s as a JSON string. */
static void put_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static void put_error(long long id, const char *what) {
    printf("{\"id\":%lld,\"error\":", id);
    put_string(what);
    printf("}\n");
}

/* ---- the operations ---- */

static void validate(long long id, const char *path) {
    hrry_report *r = NULL;
    if (hrry_validate_path(path, 0, &r) != HRRY_OK) {
        put_error(id, hrry_last_error());
        return;
    }
    printf("{\"id\":%lld,\"valid\":%s,\"rules\":[", id, hrry_report_valid(r) ? "true" : "false");
    size_t count = hrry_report_count(r);
    for (size_t k = 0; k < count; k++) {
        const char *rule = NULL;
        hrry_report_violation(r, k, &rule, NULL, NULL);
        if (k > 0) putchar(',');
        put_string(rule ? rule : "");
    }
    printf("]}\n");
    hrry_report_free(r);
}

/* Prints the "sha256" or "dequantized_sha256" member of tensor i, if it has one. */
static void put_hashes(const hrry_file *f, size_t i, const hrry_tensor_info *info) {
    char hex[65];
    if (info->layout_tag == 0x0A || info->layout_tag == 0x0B) return; /* block-paged, composite */
    if (info->is_quantized) {
        float *values = malloc(info->element_count ? info->element_count * sizeof(float) : 1);
        if (values && hrry_dequantize(f, i, values, info->element_count) == HRRY_OK) {
            hash_bytes(values, info->element_count * sizeof(float), hex);
            printf(",\"dequantized_sha256\":\"%s\"", hex);
        }
        free(values);
        return;
    }
    int t = type_index(info->type_tag);
    uint64_t len = 0;
    if (t < 0 || !TYPES[t].exported_as_stored || hrry_row_major_size(f, i, &len) != HRRY_OK) return;
    uint8_t *bytes = malloc(len ? len : 1);
    if (bytes && hrry_read_row_major(f, i, len ? bytes : NULL, len) == HRRY_OK) {
        hash_bytes(bytes, len, hex);
        printf(",\"sha256\":\"%s\"", hex);
    }
    free(bytes);
}

static void read_file(long long id, const char *path) {
    hrry_file *f = NULL;
    if (hrry_open(path, &f) != HRRY_OK) {
        put_error(id, hrry_last_error());
        return;
    }
    printf("{\"id\":%lld,\"tensors\":[", id);
    size_t count = hrry_tensor_count(f);
    for (size_t i = 0; i < count; i++) {
        const char *name = NULL;
        size_t name_len = 0;
        hrry_tensor_info info;
        if (hrry_tensor_name(f, i, &name, &name_len) != HRRY_OK ||
            hrry_tensor_info_get(f, i, &info) != HRRY_OK)
            continue;
        char *owned = malloc(name_len + 1);
        if (owned == NULL) continue;
        memcpy(owned, name, name_len);
        owned[name_len] = '\0';
        if (i > 0) putchar(',');
        printf("{\"name\":");
        put_string(owned);
        free(owned);
        int t = type_index(info.type_tag);
        printf(",\"dtype\":");
        /* 0xF0-0xFE: a private extension type (element-types.md). */
        put_string(t >= 0 ? TYPES[t].name
                          : info.type_tag >= 0xF0 && info.type_tag <= 0xFE ? "extension" : "unknown");
        printf(",\"shape\":[");
        for (uint32_t d = 0; d < info.rank; d++)
            printf("%s%llu", d ? "," : "", (unsigned long long)info.shape[d]);
        putchar(']');
        put_hashes(f, i, &info);
        putchar('}');
    }
    printf("]}\n");
    hrry_close(f);
}

int main(void) {
    static char line[1 << 16], op[32], path[8192];
    while (fgets(line, sizeof line, stdin) != NULL) {
        if (!json_string(line, "op", op, sizeof op)) continue;
        if (strcmp(op, "bye") == 0) break;
        long long id = json_int(line, "id");
        if (strcmp(op, "hello") == 0) {
            printf("{\"protocol\":1,\"name\":\"hrry-capi\",\"version\":\"%s\","
                   "\"ops\":[\"validate\",\"read\"],\"formats\":[\"hrryfile\",\"holo\"],"
                   "\"rule_ids\":true}\n",
                   hrry_version());
        } else if (!json_string(line, "path", path, sizeof path)) {
            put_error(id, "the request has no path this adapter can read");
        } else if (strcmp(op, "validate") == 0) {
            validate(id, path);
        } else if (strcmp(op, "read") == 0) {
            read_file(id, path);
        } else {
            printf("{\"id\":%lld,\"skipped\":\"no such op here\"}\n", id);
        }
        fflush(stdout);
    }
    return 0;
}
