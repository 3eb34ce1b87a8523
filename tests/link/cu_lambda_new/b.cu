struct Shape {
    __device__ virtual float area() const = 0;
    __device__ virtual ~Shape() {}
};
struct Square : Shape {
    float s;
    __device__ Square(float s) : s(s) {}
    __device__ float area() const override { return s * s; }
};
struct Circle : Shape {
    float r;
    __device__ Circle(float r) : r(r) {}
    __device__ float area() const override { return 3.14159f * r * r; }
};
__device__ Shape *make_square(float s) { return new Square(s); }
__device__ Shape *make_circle(float r) { return new Circle(r); }
