function a() {
  one();
  two();
}
