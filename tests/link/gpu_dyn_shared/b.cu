__device__ int reduce_b(const int *s, int n)
{
    int acc = 0;
    for (int i = 0; i < n; i += 97)
        acc += s[i];
    return acc;
}
