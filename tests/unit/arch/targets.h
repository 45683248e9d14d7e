/* targets.h - what targets.c gives test_exec.c (see targets.c). */
#ifndef UBT_TEST_ARCH_TARGETS_H
#define UBT_TEST_ARCH_TARGETS_H

#include <stdint.h>

struct rt_regs;

extern int g_bias, g_val;
extern long g_fib_calls;
extern void *volatile g_seen_ret;

int t_work(int x);
int t_fib(int n);
long t_sum8(long a, long b, long c, long d, long e, long f, long g, long h);
int t_rip_first(void);
int t_wrap(int x);
int t_ret41(void);
int t_jle_first(int x);
int t_call_first(void);
extern int (*volatile g_icall_fn)(void);
int t_icall_reg(int (*f)(void));
int t_icall_rip(void);

extern volatile uint64_t h_hits, h_arg0, h_arg0_sum, h_stack7, h_stack8, h_ret, h_misaligned;
extern volatile uint64_t h_order;
void h_count(struct rt_regs *r);
void h_pm_count(void); /* h_count as probe code (abi.h handler convention), in asm */
void h_first(struct rt_regs *r);
void h_add100(struct rt_regs *r);
long t_syscall(long nr, long a);
extern volatile uint64_t h_sys_nr, h_sys_ret, h_sys_enters, h_sys_exits;
void h_sys_in(void);  /* probe code: records the saved %rax (the number) */
void h_sys_out(void); /* probe code: records the saved %rax (the result) */

#endif
