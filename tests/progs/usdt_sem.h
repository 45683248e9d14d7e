/* usdt_sem.h - the semaphore-guarded probe of the usdt e2e target. */
#ifndef UBT_USDT_SEM_H
#define UBT_USDT_SEM_H

extern unsigned short ubt_guarded_semaphore;
void guarded(long i);

#endif
