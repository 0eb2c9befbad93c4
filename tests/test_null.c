/* placeholder */
#include "test.h"
void test_null(void) {}
