// Definitions used by a.cu.
__device__ int gcounter = 7;

__device__ int add_one(int x)
{
    return x + 1;
}
