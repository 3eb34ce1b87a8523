typedef int (*op_t)(int, int);
__device__ int op_add(int a, int b);   // c.cu
__device__ int op_mul(int a, int b);   // c.cu
__device__ int op_xor(int a, int b);   // c.cu
extern __device__ int weights[4];      // c.cu

__device__ op_t op_table[3] = {op_add, op_mul, op_xor};
__device__ int *weight_ptrs[2] = {&weights[1], &weights[3]};
