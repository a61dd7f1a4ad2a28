/* Does nothing: measures what launching a DPU costs. */
int main(void) { return 0; }
