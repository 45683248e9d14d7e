/* symlib.h - libubtsym.so (symlib.c) and libubtdl.so (symdl.c). */
#ifndef UBT_SYMLIB_H
#define UBT_SYMLIB_H

int sym_lib_leaf(int x);
int sym_lib_work(int x);
int sym_dl_func(int x);

#endif
