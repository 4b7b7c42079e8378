/* Reference driver for the CEC 2017 reference values of heuriscale (tests/data).

   Compiled together with the competition's official cec17_test_func.cpp, which is not
   part of this repository (see README.md), and run inside the official folder so that
   the official code finds its input_data/.  Reads blocks from standard input:

       function dim count
       x_1 ... x_dim        (count lines, one point each)

   and writes one line per block: "result function dim f_1 ... f_count", each value
   printed with 17 significant digits (exact round trip of a double); the official code's
   own messages (its D = 2 note for F21/F22) go to standard output too, on other lines.  Written in the common subset
   of C and C++; it is compiled as C++ because the official file is C++ (cec17_test_func.cpp).
*/
#include <stdio.h>
#include <stdlib.h>

void cec17_test_func(double *x, double *f, int nx, int mx, int func_num);

/* The globals the official code declares extern. */
double *OShift, *M, *y, *z, *x_bound;
int ini_flag = 0, n_flag, func_flag, *SS;

int main(void)
{
    int function, dim, count, i;
    while (scanf("%d %d %d", &function, &dim, &count) == 3) {
        double *x = (double *)malloc(sizeof(double) * dim * count);
        double *f = (double *)malloc(sizeof(double) * count);
        for (i = 0; i < dim * count; i++) {
            if (scanf("%lf", &x[i]) != 1) {
                fprintf(stderr, "driver: bad input in F%d D%d\n", function, dim);
                return 1;
            }
        }
        cec17_test_func(x, f, dim, count, function);
        printf("result %d %d", function, dim);
        for (i = 0; i < count; i++)
            printf(" %.17g", f[i]);
        printf("\n");
        free(x);
        free(f);
    }
    return 0;
}
