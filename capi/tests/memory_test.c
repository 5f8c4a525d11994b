/* The memory bound and the memory cap of the C ABI (Linux):
 *
 * - `hrry_open` on every file of the hostile set (written by
 *   `cargo run -p hrry-tools --bin hostile_files DIR`), each in a child process,
 *   answers with a status (never a crash, never HRRY_INTERNAL), and the child's
 *   peak resident memory (VmHWM, read by the child itself) grows by at most
 *   64 MiB + 2 x the file's length over what it held before the call: what
 *   docs/security.md promises for an open that maps the file and reads all of it
 *   (the mapped pages it touched, and the metadata decoded from them).
 * - `hrry_open_limits` / `hrry_validate_path_limits` with a small `max_memory`
 *   refuse a file whose metadata needs more (HF-LIM-001 naming max_memory), and
 *   open it with the defaults; `hrry_limits_init` refuses a size it does not know.
 *
 * Built without sanitizers (their shadow memory would be measured too).
 * Usage: memory_test HOSTILE_DIR KV_FILE, where KV_FILE holds a 1 MiB KV array. */

#define _POSIX_C_SOURCE 200809L
#include <hrry.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB (1024ull * 1024ull)

static int failures = 0;

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                         \
            fprintf(stderr, __VA_ARGS__);                                                \
            fprintf(stderr, "\n");                                                       \
            failures++;                                                                  \
        }                                                                                \
    } while (0)

/* A field of /proc/self/status ("VmHWM:", "VmRSS:"), in bytes; 0 when absent. */
static unsigned long long status_bytes(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kib = 0;
    size_t n = strlen(field);
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0) {
            kib = strtoull(line + n, NULL, 10);
            break;
        }
    fclose(f);
    return kib * 1024;
}

/* What a child reports through its pipe. */
struct measured {
    int status;
    unsigned long long before, peak;
};

/* Opens `path` with hrry_open in a child process; returns 0 and fills `m` when the
 * child exited normally, -1 (after reporting) otherwise. */
static int open_in_child(const char *path, struct measured *m) {
    int fds[2];
    pid_t pid;
    int wstatus;
    ssize_t got;
    if (pipe(fds) != 0) {
        perror("pipe");
        exit(2);
    }
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        struct measured r;
        hrry_file *f = NULL;
        close(fds[0]);
        r.before = status_bytes("VmRSS:");
        r.status = hrry_open(path, &f);
        if (r.status == HRRY_OK) {
            /* What a program does next: look at the tensors. */
            size_t count = hrry_tensor_count(f), i;
            for (i = 0; i < count; i++) {
                hrry_tensor_info info;
                hrry_tensor_info_get(f, i, &info);
            }
        }
        r.peak = status_bytes("VmHWM:");
        hrry_close(f);
        if (write(fds[1], &r, sizeof r) != (ssize_t)sizeof r)
            _exit(3);
        _exit(0);
    }
    close(fds[1]);
    got = read(fds[0], m, sizeof *m);
    close(fds[0]);
    if (waitpid(pid, &wstatus, 0) != pid) {
        perror("waitpid");
        exit(2);
    }
    if (WIFSIGNALED(wstatus)) {
        CHECK(0, "hrry_open(%s): the child was killed by signal %d", path, WTERMSIG(wstatus));
        return -1;
    }
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || got != (ssize_t)sizeof *m) {
        CHECK(0, "hrry_open(%s): the child exited %d without a measurement", path,
              WEXITSTATUS(wstatus));
        return -1;
    }
    return 0;
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void hostile_set(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int files = 0;
    CHECK(d != NULL, "cannot open %s", dir);
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;
        struct measured m;
        unsigned long long bound, grown;
        if (!ends_with(e->d_name, ".hrry"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0)
            continue;
        files++;
        if (open_in_child(path, &m) != 0)
            continue;
        bound = 64 * MIB + 2ull * (unsigned long long)st.st_size;
        grown = m.peak > m.before ? m.peak - m.before : 0;
        printf("hrry_open %s: %lld bytes (%lld on disk), %s, peak %.1f MiB, grown %.1f MiB "
               "(bound %.1f)\n",
               e->d_name, (long long)st.st_size, (long long)st.st_blocks * 512,
               hrry_status_name(m.status), m.peak / (double)MIB, grown / (double)MIB,
               bound / (double)MIB);
        CHECK(m.status != HRRY_INTERNAL, "hrry_open(%s): HRRY_INTERNAL", path);
        CHECK(grown <= bound, "hrry_open(%s): grew by %llu bytes, over 64 MiB + 2 x %lld",
              path, grown, (long long)st.st_size);
    }
    closedir(d);
    CHECK(files >= 10, "%s holds %d .hrry files, not the hostile set", dir, files);
}

static void memory_cap(const char *kv_file) {
    hrry_limits limits;
    hrry_file *f = NULL;
    hrry_report *r = NULL;
    size_t k;
    int found = 0;

    CHECK(hrry_limits_init(&limits, sizeof limits) == HRRY_OK, "init: %s", hrry_last_error());
    CHECK(limits.size == sizeof limits && limits.max_memory == 2048 * MIB,
          "defaults: size %zu, max_memory %llu", limits.size,
          (unsigned long long)limits.max_memory);
    CHECK(hrry_limits_init(&limits, sizeof limits + 8) == HRRY_ARGUMENT,
          "a larger hrry_limits is refused");
    CHECK(hrry_limits_init(NULL, sizeof limits) == HRRY_ARGUMENT, "NULL is refused");

    /* Within the defaults (NULL or initialised), the file opens and validates. */
    CHECK(hrry_open_limits(kv_file, NULL, &f) == HRRY_OK, "NULL limits: %s", hrry_last_error());
    hrry_close(f);
    f = NULL;
    CHECK(hrry_open_limits(kv_file, &limits, &f) == HRRY_OK, "defaults: %s", hrry_last_error());
    hrry_close(f);
    f = NULL;

    /* Under a 512 KiB cap, its 1 MiB KV array is refused, naming the budget. */
    limits.max_memory = 512 * 1024;
    CHECK(hrry_open_limits(kv_file, &limits, &f) == HRRY_INVALID && f == NULL,
          "capped open: %s", hrry_last_error());
    CHECK(strstr(hrry_last_error(), "HF-LIM-001") && strstr(hrry_last_error(), "max_memory"),
          "capped open names HF-LIM-001 and max_memory: %s", hrry_last_error());
    CHECK(hrry_validate_path_limits(kv_file, 0, HRRY_POLICY_HARDENED, &limits, &r) == HRRY_OK,
          "capped validation: %s", hrry_last_error());
    CHECK(hrry_report_verdict(r) == HRRY_VERDICT_REFUSED, "capped validation is refused");
    for (k = 0; k < hrry_report_count(r); k++) {
        const char *rule, *message;
        uint64_t offset;
        hrry_report_violation(r, k, &rule, &offset, &message);
        found |= strcmp(rule, "HF-LIM-001") == 0 && strstr(message, "max_memory") != NULL;
    }
    CHECK(found, "the capped report names HF-LIM-001 and max_memory");
    hrry_report_free(r);
    r = NULL;
    CHECK(hrry_validate_path_limits(kv_file, 0, HRRY_POLICY_HARDENED, NULL, &r) == HRRY_OK &&
              hrry_report_verdict(r) == HRRY_VERDICT_VALID,
          "uncapped validation is valid");
    hrry_report_free(r);

    /* A hrry_limits whose size this library does not know is an argument error. */
    limits.size = 4;
    CHECK(hrry_open_limits(kv_file, &limits, &f) == HRRY_ARGUMENT && f == NULL,
          "a wrong size is HRRY_ARGUMENT");
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s HOSTILE_DIR KV_FILE\n", argv[0]);
        return 2;
    }
    hostile_set(argv[1]);
    memory_cap(argv[2]);
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("memory_test: ok\n");
    return 0;
}
