__constant__ int cX[4] = {1, 2, 3, 4};
__device__ __noinline__ int bfence(int *p, int i) {
    int v = cX[i & 3];
    __threadfence();
    atomicAdd(p, v);
    __threadfence();
    return v + cX[2];
}
__global__ void kb(int *o) {
    int t = threadIdx.x;
    o[t] = bfence(o, t) + cX[t & 3];
}
