/*
 * empty.c: a fault-free kernel that does nothing. Every tasklet returns from main at once; used to measure the
 * fixed cost of a launch and to check that a launch with no work completes.
 */
int main(void)
{
    return 0;
}
