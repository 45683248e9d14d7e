/*
 * libcalls.c - e2e target for wildcards over a whole library
 * (tests/e2e/wild.test): libc functions called an exact number of times,
 * and threads that keep calling libc while a tracer comes and goes.
 *
 *   prog_libcalls rand N     srand(1), then N rand() and 2N rand_r():
 *                            `uprobe:libc:rand*` counts rand N, random N,
 *                            random_r N (rand calls them) and rand_r 2N
 *   prog_libcalls rwlock N   N pthread_rwlock_trywrlock() (each unlocked):
 *                            `uretprobe:libc:pthread_rwlock_try*` also
 *                            matches tryrdlock, whose first bytes are a
 *                            branch target (no jump there)
 *   prog_libcalls xref N     N calls of entered() and N of enter_mid(), which
 *                            jumps to entered+3 as glibc's mempcpy enters
 *                            memmove (a jump at entered would break it)
 *   prog_libcalls threads N  prints `ready <pid>`, then 4 threads each run
 *                            rounds of libc calls (snprintf, strlen, qsort,
 *                            memcpy, strtol, malloc/free, rand_r); every N
 *                            rounds main prints `round K sum S`, where S is
 *                            the same in every round when libc computes
 *                            what it should; runs until SIGTERM/SIGINT
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#define NTHREADS 4

/*
 * entered(x) = x + 3 over a 3-byte first instruction; enter_mid(x) =
 * 2x + 3 enters it after that instruction, as hand-written assembly does.
 */
long entered(long x);
long enter_mid(long x);
__asm__(".text\n"
	".globl enter_mid\n"
	".type enter_mid, @function\n"
	"enter_mid:\n"
	"  lea (%rdi,%rdi), %rax\n"
	"  jmp entered_mid\n"
	".size enter_mid, .-enter_mid\n"
	".globl entered\n"
	".type entered, @function\n"
	"entered:\n"
	"  mov %rdi, %rax\n"
	"entered_mid:\n"
	"  add $3, %rax\n"
	"  ret\n"
	".size entered, .-entered\n");

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* One round of libc work; the result depends only on seed. */
static unsigned long work(unsigned seed)
{
	char buf[64];
	int v[16];
	unsigned long s = 0;
	for (int i = 0; i < 16; i++)
		v[i] = rand_r(&seed) % 1000;
	qsort(v, 16, sizeof(v[0]), cmp_int);
	for (int i = 0; i < 16; i++) {
		int n = snprintf(buf, sizeof(buf), "%d-%d", v[i], i);
		char *p = malloc((size_t)n + 1);
		memcpy(p, buf, (size_t)n + 1);
		s = s * 31 + strlen(p) + (unsigned long)strtol(p, NULL, 10);
		free(p);
	}
	return s;
}

static volatile sig_atomic_t stop; /* a signal asked to end */
static int quit;		   /* main's decision, read by the workers after `start` */
static unsigned long sums[NTHREADS];
static long rounds_per_report;
static pthread_barrier_t start, done;

static void *worker(void *arg)
{
	long id = (long)arg;
	for (;;) {
		pthread_barrier_wait(&start);
		if (quit)
			return NULL;
		unsigned long s = 0;
		for (long r = 0; r < rounds_per_report; r++)
			s += work((unsigned)(id * 1000 + r));
		sums[id] = s;
		pthread_barrier_wait(&done);
	}
}

/* A crash says where: the test prints it (a tracer must never cause one). */
static void on_segv(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	char buf[128];
	int n = snprintf(buf, sizeof(buf), "crash: signal %d at pc %llx addr %p\n", sig,
			 (unsigned long long)uc->uc_mcontext.gregs[REG_RIP], si->si_addr);
	write(1, buf, (size_t)n);
	_exit(3);
}

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static int threads(long n)
{
	pthread_t t[NTHREADS];
	rounds_per_report = n;
	pthread_barrier_init(&start, NULL, NTHREADS + 1);
	pthread_barrier_init(&done, NULL, NTHREADS + 1);
	struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO};
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (long k = 1; !stop; k++) {
		pthread_barrier_wait(&start);
		pthread_barrier_wait(&done);
		unsigned long s = 0;
		for (int i = 0; i < NTHREADS; i++)
			s += sums[i];
		printf("round %ld sum %lu\n", k, s);
		fflush(stdout);
	}
	quit = 1;
	pthread_barrier_wait(&start); /* the workers see quit and end */
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("exit\n");
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 10;
	const char *mode = argc > 1 ? argv[1] : "rand";
	if (!strcmp(mode, "rand")) {
		unsigned seed = 7;
		long s = 0;
		srand(1);
		for (long i = 0; i < n; i++)
			s += rand() % 10;
		for (long i = 0; i < 2 * n; i++)
			s += rand_r(&seed) % 10;
		printf("rand done %ld\n", s);
		return 0;
	}
	if (!strcmp(mode, "rwlock")) {
		pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
		long got = 0;
		for (long i = 0; i < n; i++)
			if (!pthread_rwlock_trywrlock(&l)) {
				got++;
				pthread_rwlock_unlock(&l);
			}
		printf("rwlock done %ld\n", got);
		return 0;
	}
	if (!strcmp(mode, "xref")) {
		long s = 0;
		for (long i = 0; i < n; i++)
			s += entered(i) + enter_mid(i);
		printf("xref done %ld\n", s);
		return 0;
	}
	if (!strcmp(mode, "threads"))
		return threads(n);
	fprintf(stderr, "usage: prog_libcalls rand|rwlock|threads N\n");
	return 2;
}
