__device__ int add(int a, int b) { return a + b; }
__device__ int sub(int a, int b) { return a - b; }
__device__ int mul(int a, int b) { return a * b; }
typedef int (*op_t)(int, int);
__device__ op_t ops[3] = {add, sub, mul};
__device__ int apply(int which, int a, int b) { return ops[which](a, b); }
__device__ __noinline__ int rec(int n) { return n <= 1 ? 1 : n * rec(n - 1); }
__global__ void k_rec(int *p) { p[0] = rec(p[1]); }
