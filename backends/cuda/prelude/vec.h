// KgVec is N consecutive elements moved as one access: the elementwise
// template's vector loads and stores (16 bytes per instruction at most;
// wider ones split).
template <class T, int N>
struct alignas(sizeof(T) * N) KgVec {
  T v[N];
};

