#include "test.h"
void test_norm(void) {}
