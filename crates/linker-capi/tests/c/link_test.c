/* The C ABI from C: a real link plus the error paths.
 *
 * Usage: link_test FIXTURES_DIR OUT_CUBIN
 *   FIXTURES_DIR  the repository's tests/link directory
 *   OUT_CUBIN     where the linked call_extern cubin is written (the Rust test
 *                 compares it with nvlink's)
 *
 * Prints one line per failed check and "N passed, M failed" at the end; exits 0
 * only when every check passed. Built and run by tests/c_abi.rs. */

#include "culink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define CHECK(cond, ...)                                  \
    do {                                                  \
        if (cond) {                                       \
            passed++;                                     \
        } else {                                          \
            failed++;                                     \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                 \
            fputc('\n', stderr);                          \
        }                                                 \
    } while (0)

#define EXPECT(call, want)                                                    \
    do {                                                                      \
        culinkResult r_ = (call);                                             \
        CHECK(r_ == (want), "%s returned %s, expected %s", #call,             \
              culinkGetErrorString(r_), culinkGetErrorString(want));          \
    } while (0)

static const char *dir;

static char *path(const char *rel) {
    static char buf[4][4096];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", dir, rel);
    return p;
}

static unsigned char *read_file(const char *p, size_t *size) {
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return b;
}

/* The error log of h (malloc'd; "" when it cannot be read). */
static char *error_log(culinkHandle h) {
    size_t n = 0;
    if (culinkGetErrorLogSize(h, &n) != CULINK_SUCCESS || n == 0) return strdup("");
    char *log = malloc(n);
    if (culinkGetErrorLog(h, log) != CULINK_SUCCESS) log[0] = 0;
    return log;
}

static culinkHandle create_sm90(void) {
    const char *opts[] = {"-arch=sm_90"};
    culinkHandle h = NULL;
    EXPECT(culinkCreate(&h, 1, opts), CULINK_SUCCESS);
    CHECK(h != NULL, "culinkCreate gave a NULL handle");
    return h;
}

static void test_version_and_nulls(void) {
    unsigned major = 99, minor = 99;
    EXPECT(culinkVersion(&major, &minor), CULINK_SUCCESS);
    CHECK(major == 0 && minor < 99, "version %u.%u", major, minor);
    EXPECT(culinkVersion(NULL, &minor), CULINK_ERROR_NULL_INPUT);
    EXPECT(culinkCreate(NULL, 0, NULL), CULINK_ERROR_NULL_INPUT);
    EXPECT(culinkComplete(NULL), CULINK_ERROR_NULL_INPUT);
    EXPECT(culinkDestroy(NULL), CULINK_ERROR_NULL_INPUT);
    culinkHandle none = NULL;
    EXPECT(culinkDestroy(&none), CULINK_ERROR_NULL_INPUT);
    size_t n;
    EXPECT(culinkGetErrorLogSize(NULL, &n), CULINK_ERROR_NULL_INPUT);
    CHECK(strcmp(culinkGetErrorString(CULINK_ERROR_MISSING_ARCH), "CULINK_ERROR_MISSING_ARCH") == 0,
          "culinkGetErrorString");
    CHECK(strcmp(culinkGetErrorString(12345), "CULINK_ERROR_UNKNOWN") == 0, "unknown result name");
}

static void test_options(void) {
    culinkHandle h = (culinkHandle)1;
    const char *verbose[] = {"-v"};
    EXPECT(culinkCreate(&h, 1, verbose), CULINK_ERROR_MISSING_ARCH);
    CHECK(h == NULL, "failed culinkCreate must leave a NULL handle");
    EXPECT(culinkCreate(&h, 0, NULL), CULINK_ERROR_MISSING_ARCH);
    const char *unknown[] = {"-arch=sm_90", "-frobnicate"};
    EXPECT(culinkCreate(&h, 2, unknown), CULINK_ERROR_UNRECOGNIZED_OPTION);
    const char *bogus[] = {"-arch=bogus"};
    EXPECT(culinkCreate(&h, 1, bogus), CULINK_ERROR_UNRECOGNIZED_ARCH);
    const char *null_opt[] = {"-arch=sm_90", NULL};
    EXPECT(culinkCreate(&h, 2, null_opt), CULINK_ERROR_NULL_INPUT);
    const char *nv[] = {"-arch", "sm_90", "-lto", "-O3", "-w", "-Werror", "-maxrregcount=32"};
    EXPECT(culinkCreate(&h, 7, nv), CULINK_SUCCESS);
    EXPECT(culinkDestroy(&h), CULINK_SUCCESS);
}

static void test_link(const char *out) {
    culinkHandle h = create_sm90();
    EXPECT(culinkAddFile(h, CULINK_INPUT_CUBIN, path("call_extern/a.sm_90.o")), CULINK_SUCCESS);
    size_t bsize = 0;
    unsigned char *b = read_file(path("call_extern/b.sm_90.o"), &bsize);
    CHECK(b != NULL, "cannot read b.sm_90.o");
    if (!b) return;
    EXPECT(culinkAddData(h, CULINK_INPUT_ANY, b, bsize, "b.sm_90.o"), CULINK_SUCCESS);
    memset(b, 0, bsize); /* the input was copied */
    free(b);

    EXPECT(culinkComplete(h), CULINK_SUCCESS);
    char *log = error_log(h);
    CHECK(log[0] == 0, "error log after success: %s", log);
    free(log);
    size_t size = 0;
    EXPECT(culinkGetLinkedCubinSize(h, NULL), CULINK_ERROR_NULL_INPUT);
    EXPECT(culinkGetLinkedCubin(h, NULL), CULINK_ERROR_NULL_INPUT);
    EXPECT(culinkGetLinkedCubinSize(h, &size), CULINK_SUCCESS);
    CHECK(size > 64, "cubin size %zu", size);
    unsigned char *cubin = malloc(size);
    EXPECT(culinkGetLinkedCubin(h, cubin), CULINK_SUCCESS);
    CHECK(memcmp(cubin, "\x7f" "ELF", 4) == 0, "linked cubin is not ELF");
    FILE *f = fopen(out, "wb");
    CHECK(f != NULL, "cannot write %s", out);
    if (f) {
        CHECK(fwrite(cubin, 1, size, f) == size, "short write");
        fclose(f);
    }
    free(cubin);

    /* A completed handle takes no more inputs and completes once. */
    EXPECT(culinkAddFile(h, CULINK_INPUT_CUBIN, path("call_extern/a.sm_90.o")),
           CULINK_ERROR_INVALID_STATE);
    EXPECT(culinkComplete(h), CULINK_ERROR_INVALID_STATE);

    culinkHandle stale = h;
    EXPECT(culinkDestroy(&h), CULINK_SUCCESS);
    CHECK(h == NULL, "culinkDestroy must clear the handle");
    /* A destroyed handle is detected, not undefined behaviour. */
    EXPECT(culinkComplete(stale), CULINK_ERROR_INVALID_INPUT);
    EXPECT(culinkDestroy(&stale), CULINK_ERROR_INVALID_INPUT);
}

static void test_bad_inputs(void) {
    culinkHandle h = create_sm90();
    static const char garbage[] = "this is not a cubin, just some bytes";
    EXPECT(culinkAddData(h, CULINK_INPUT_CUBIN, garbage, sizeof garbage, "garbage.bin"),
           CULINK_ERROR_INVALID_INPUT);
    char *log = error_log(h);
    CHECK(strstr(log, "garbage.bin") != NULL, "error log does not name the input: %s", log);
    free(log);
    EXPECT(culinkAddData(h, CULINK_INPUT_ANY, garbage, sizeof garbage, "junk.any"),
           CULINK_ERROR_UNRECOGNIZED_INPUT);
    log = error_log(h);
    CHECK(strstr(log, "junk.any") != NULL, "error log does not name the input: %s", log);
    free(log);
    EXPECT(culinkAddData(h, CULINK_INPUT_CUBIN, NULL, 10, "null.o"), CULINK_ERROR_NULL_INPUT);
    EXPECT(culinkAddData(h, CULINK_INPUT_CUBIN, garbage, 0, "empty.o"), CULINK_ERROR_INVALID_INPUT);
    EXPECT(culinkAddData(h, 42, garbage, sizeof garbage, "t.o"), CULINK_ERROR_UNRECOGNIZED_INPUT);
    EXPECT(culinkAddFile(h, CULINK_INPUT_CUBIN, path("no/such/file.o")), CULINK_ERROR_INVALID_INPUT);
    EXPECT(culinkAddFile(h, CULINK_INPUT_CUBIN, NULL), CULINK_ERROR_NULL_INPUT);
    EXPECT(culinkAddFile(h, CULINK_INPUT_PTX, path("call_extern/a.sm_90.o")),
           CULINK_ERROR_INCORRECT_INPUT_TYPE);
    EXPECT(culinkAddFile(h, CULINK_INPUT_FATBIN, path("call_extern/a.sm_90.o")),
           CULINK_ERROR_INCORRECT_INPUT_TYPE);
    log = error_log(h);
    CHECK(strstr(log, "file.o") != NULL && strstr(log, "a.sm_90.o") != NULL, "error log: %s", log);
    free(log);
    EXPECT(culinkDestroy(&h), CULINK_SUCCESS);
}

/* PTX is taken (as PTX or ANY) and compiled by culinkComplete; a ptxas that
   cannot run makes that fail with CULINK_ERROR_PTX_COMPILE, naming the input. */
static void test_ptx_without_ptxas(void) {
    const char *opts[] = {"-arch=sm_90", "-ptxas=/nonexistent/ptxas", "-lineinfo"};
    culinkHandle h = NULL;
    EXPECT(culinkCreate(&h, 3, opts), CULINK_SUCCESS);
    EXPECT(culinkAddFile(h, CULINK_INPUT_PTX, path("call_extern/a.ptx")), CULINK_SUCCESS);
    EXPECT(culinkAddFile(h, CULINK_INPUT_ANY, path("call_extern/b.ptx")), CULINK_SUCCESS);
    EXPECT(culinkComplete(h), CULINK_ERROR_PTX_COMPILE);
    char *log = error_log(h);
    CHECK(strstr(log, "a.ptx") != NULL && strstr(log, "/nonexistent/ptxas") != NULL,
          "error log: %s", log);
    free(log);
    EXPECT(culinkDestroy(&h), CULINK_SUCCESS);
}

static void test_link_errors(void) {
    /* Undefined symbols: reported by culinkComplete, naming symbol and input. */
    culinkHandle h = create_sm90();
    EXPECT(culinkAddFile(h, CULINK_INPUT_CUBIN, path("undefined/a.sm_90.o")), CULINK_SUCCESS);
    EXPECT(culinkComplete(h), CULINK_ERROR_INVALID_INPUT);
    char *log = error_log(h);
    CHECK(strstr(log, "add_one") && strstr(log, "gcounter") && strstr(log, "a.sm_90.o"),
          "undefined-symbol log: %s", log);
    free(log);
    size_t size;
    EXPECT(culinkGetLinkedCubinSize(h, &size), CULINK_ERROR_INVALID_STATE);
    EXPECT(culinkDestroy(&h), CULINK_SUCCESS);

    /* An input for another architecture. */
    h = create_sm90();
    EXPECT(culinkAddFile(h, CULINK_INPUT_CUBIN, path("arch_mismatch/a.sm_90.o")), CULINK_SUCCESS);
    EXPECT(culinkAddFile(h, CULINK_INPUT_CUBIN, path("arch_mismatch/b.sm_80.o")), CULINK_SUCCESS);
    EXPECT(culinkComplete(h), CULINK_ERROR_ARCH_MISMATCH);
    log = error_log(h);
    CHECK(strstr(log, "b.sm_80.o") != NULL, "arch-mismatch log: %s", log);
    free(log);
    EXPECT(culinkDestroy(&h), CULINK_SUCCESS);

    /* No inputs at all; no cubin before culinkComplete. */
    h = create_sm90();
    EXPECT(culinkGetLinkedCubinSize(h, &size), CULINK_ERROR_INVALID_STATE);
    EXPECT(culinkComplete(h), CULINK_ERROR_INVALID_INPUT);
    EXPECT(culinkDestroy(&h), CULINK_SUCCESS);
}

static void test_info_log(void) {
    const char *opts[] = {"-arch=sm_90", "-v"};
    culinkHandle h = NULL;
    EXPECT(culinkCreate(&h, 2, opts), CULINK_SUCCESS);
    EXPECT(culinkAddFile(h, CULINK_INPUT_ANY, path("call_extern/a.sm_90.o")), CULINK_SUCCESS);
    EXPECT(culinkAddFile(h, CULINK_INPUT_ANY, path("call_extern/b.sm_90.o")), CULINK_SUCCESS);
    EXPECT(culinkComplete(h), CULINK_SUCCESS);
    size_t n = 0;
    EXPECT(culinkGetInfoLogSize(h, &n), CULINK_SUCCESS);
    char *log = malloc(n);
    EXPECT(culinkGetInfoLog(h, log), CULINK_SUCCESS);
    CHECK(n == strlen(log) + 1, "info log size %zu vs length %zu", n, strlen(log));
    CHECK(strstr(log, "phase") != NULL, "-v info log: %s", log);
    /* nvlink's resource report of the output (call_extern's kernel). */
    CHECK(strstr(log, "Function properties for 'kern_a':") != NULL, "-v info log: %s", log);
    CHECK(strstr(log, "used 24 registers, used 0 barriers") != NULL, "-v info log: %s", log);
    free(log);
    EXPECT(culinkDestroy(&h), CULINK_SUCCESS);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s FIXTURES_DIR OUT_CUBIN\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    test_version_and_nulls();
    test_options();
    test_link(argv[2]);
    test_bad_inputs();
    test_ptx_without_ptxas();
    test_link_errors();
    test_info_log();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
