// Calls through a function-pointer table and reads through a data-pointer table,
// both initialized in b.cu with addresses of c.cu's functions and global.
typedef int (*op_t)(int, int);
extern __device__ op_t op_table[3];        // b.cu
extern __device__ int *weight_ptrs[2];     // b.cu

__global__ void kops(int *out)
{
    int t = threadIdx.x;
    int acc = t + 1;
    for (int i = 0; i < 3; i++)
        acc = op_table[(t + i) % 3](acc, *weight_ptrs[(t + i) & 1]);
    out[t] = acc;
}
