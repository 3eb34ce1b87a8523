// Device lambdas, device-side new/delete and virtual functions under -rdc.
struct Shape {
    __device__ virtual float area() const = 0;
    __device__ virtual ~Shape() {}
};
__device__ Shape *make_square(float s);   // b.cu
__device__ Shape *make_circle(float r);   // b.cu

template <typename F> __device__ float apply(F f, float x) { return f(x); }

__global__ void kl(float *out, int n)
{
    int i = threadIdx.x;
    float k = out[0];
    auto sq = [k](float x) { return x * x + k; };
    Shape *s = (i & 1) ? make_square(out[i]) : make_circle(out[i]);
    float a = s ? s->area() : 0.0f;
    delete s;
    int *tmp = new int[n];
    if (tmp) {
        tmp[0] = i;
        a += tmp[0];
        delete[] tmp;
    }
    out[i] = apply(sq, a);
}
