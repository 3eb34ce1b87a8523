__constant__ int cx[4] = {1, 2, 3, 4};
__constant__ short cs[10] = {5, 6, 7};
__global__ void kb(int *o) {
    int t = threadIdx.x;
    o[t] = cx[t & 3] + cs[3] + cs[t % 10] + cx[2];
}
