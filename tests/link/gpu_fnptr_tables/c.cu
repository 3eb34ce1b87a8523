__device__ int op_add(int a, int b) { return a + b; }
__device__ int op_mul(int a, int b) { return a * b; }
__device__ int op_xor(int a, int b) { return a ^ b; }
__device__ int weights[4] = {3, 5, 7, 11};
