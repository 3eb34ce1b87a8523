__constant__ float coeffs[4] = {1,2,3,4};
__device__ float dv[8];
__managed__ int mv[4];
__device__ int fa(int x) { return x + 1; }
typedef int (*fp)(int);
__constant__ const float* ccp = coeffs + 2;
__constant__ float* cdp = dv + 1;
__constant__ fp cfp = fa;
__device__ int* dmp;
struct S { const float* a; float* b; fp f; };
__device__ S ds = { coeffs + 1, dv, fa };
__constant__ S cs = { coeffs + 3, dv + 2, fa };
__global__ void k(float* o) { o[0] = ccp[0] + cdp[1] + cfp(2) + *dmp + ds.a[0] + ds.b[0] + ds.f(1) + cs.a[0] + cs.b[0] + cs.f(3); }
