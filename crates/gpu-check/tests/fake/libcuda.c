/* A fake CUDA driver for testing gpu-check without a GPU: "device memory" is host
 * memory, kernels are deterministic functions of their name and launch shape.
 * Built by tests/fake_driver.rs with `cc -shared -fPIC`.
 *   FAKE_CC_MAJOR=N     report compute capability N.0 (default 9)
 *   FAKE_NO_DEVICE=1    cuInit fails with CUDA_ERROR_NO_DEVICE (100)
 *   FAKE_FLAKY=1        kernels named "flaky" write the process id (differs per run)
 *   FAKE_CORRUPT=1      when the process runs culink's cubin, kernels write a
 *                       different byte and print a different line
 * Globals: every name gets 24 bytes: a pointer to its own byte 8, then the name. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;

static int corrupt(void)
{
    static int v = -1;
    if (v < 0) {
        v = 0;
        const char *e = getenv("FAKE_CORRUPT");
        FILE *f = fopen("/proc/self/cmdline", "rb");
        if (e && *e == '1' && f) {
            char buf[4096];
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            for (size_t i = 0; i < n; i++)
                if (buf[i] == 0)
                    buf[i] = ' ';
            buf[n] = 0;
            v = strstr(buf, "culink.cubin") != NULL;
        }
        if (f)
            fclose(f);
    }
    return v;
}

CUresult cuInit(unsigned f)
{
    (void)f;
    /* FAKE_NO_DEVICE=1: as on a machine with the driver but no usable GPU. */
    const char *e = getenv("FAKE_NO_DEVICE");
    return e && *e == '1' ? 100 /* CUDA_ERROR_NO_DEVICE */ : 0;
}
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int o) { *d = o; return 0; }
CUresult cuDeviceGetName(char *s, int n, int d)
{
    (void)d;
    snprintf(s, n, "Fake GPU");
    return 0;
}
CUresult cuDeviceGetAttribute(int *v, int a, int d)
{
    (void)d;
    const char *m = getenv("FAKE_CC_MAJOR");
    *v = a == 75 ? (m ? atoi(m) : 9) : 0;
    return 0;
}
static int ctx;
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = &ctx; return 0; }
CUresult cuCtxSetCurrent(void *c) { (void)c; return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuCtxSetLimit(int l, size_t v) { (void)l; (void)v; return 0; }

CUresult cuModuleLoadData(void **m, const void *image)
{
    if (memcmp(image, "\177ELF", 4) != 0)
        return 200; /* CUDA_ERROR_INVALID_IMAGE */
    *m = malloc(1);
    return 0;
}
CUresult cuModuleUnload(void *m) { free(m); return 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name)
{
    (void)m;
    if (strcmp(name, "missing") == 0)
        return 500;
    *f = strdup(name);
    return 0;
}

struct global { char name[256]; unsigned char *mem; };
static struct global globals[512];
static int nglobals;

CUresult cuModuleGetGlobal_v2(uint64_t *p, size_t *n, void *m, const char *name)
{
    (void)m;
    for (int i = 0; i < nglobals; i++)
        if (strcmp(globals[i].name, name) == 0) {
            *p = (uint64_t)(uintptr_t)globals[i].mem;
            *n = 24;
            return 0;
        }
    if (nglobals == 512 || strlen(name) >= 256)
        return 500;
    struct global *g = &globals[nglobals++];
    strcpy(g->name, name);
    g->mem = aligned_alloc(8, 24);
    memset(g->mem, 0, 24);
    uint64_t self = (uint64_t)(uintptr_t)(g->mem + 8);
    memcpy(g->mem, &self, 8);
    strncpy((char *)g->mem + 8, name, 15);
    *p = (uint64_t)(uintptr_t)g->mem;
    *n = 24;
    return 0;
}

CUresult cuMemAlloc_v2(uint64_t *p, size_t n)
{
    *p = (uint64_t)(uintptr_t)aligned_alloc(256, (n + 255) / 256 * 256);
    return *p ? 0 : 2;
}
CUresult cuMemFree_v2(uint64_t p) { free((void *)(uintptr_t)p); return 0; }
CUresult cuMemcpyHtoD_v2(uint64_t d, const void *s, size_t n)
{
    memcpy((void *)(uintptr_t)d, s, n);
    return 0;
}
CUresult cuMemcpyDtoH_v2(void *d, uint64_t s, size_t n)
{
    memcpy(d, (const void *)(uintptr_t)s, n);
    return 0;
}
CUresult cuFuncSetAttribute(void *f, int a, int v) { (void)f; (void)a; (void)v; return 0; }

/* Kernel: params[0] is a pointer to at least 16 bytes; params[1] (if the name
 * ends in "_s") a u32 scalar. Writes grid.x, block.x, shared, scalar. */
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, void *stream,
                        void **params, void **extra)
{
    (void)gy; (void)gz; (void)by; (void)bz; (void)stream; (void)extra;
    const char *name = f;
    if (strcmp(name, "fault") == 0)
        return 700; /* CUDA_ERROR_ILLEGAL_ADDRESS */
    if (!params) {
        printf("fake %s (no parameters)\n", name);
        return 0;
    }
    uint64_t out;
    memcpy(&out, params[0], 8);
    uint32_t w[4] = {gx, bx, shared, 0};
    size_t len = strlen(name);
    if (len > 2 && strcmp(name + len - 2, "_s") == 0)
        memcpy(&w[3], params[1], 4);
    if (corrupt())
        w[0] += 1;
    const char *fl = getenv("FAKE_FLAKY");
    if (fl && *fl == '1' && strcmp(name, "flaky") == 0)
        w[3] = (uint32_t)getpid();
    memcpy((void *)(uintptr_t)out, w, sizeof w);
    printf("fake %s grid %u block %u%s\n", name, gx, bx, corrupt() ? " (culink)" : "");
    return 0;
}

CUresult cuGetErrorName(CUresult e, const char **s)
{
    static char buf[64];
    snprintf(buf, sizeof buf, "CUDA_ERROR_FAKE_%d", e);
    *s = buf;
    return 0;
}
