__device__ int table[4] = {1, 2, 3, 4};
__device__ float scratch[16];
