/*
 * aio.c - the same reads through three asynchronous I/O interfaces, for
 * the cost study in examples/aio/README.md (traced by aio.bt).
 *
 *   aio [ROUNDS [DEPTH [FILE]]]      defaults: 64 rounds, depth 8, a file in /tmp
 *
 * It writes a file of DEPTH * 4 KiB blocks with a fixed pattern, then, with
 * each library in turn, runs ROUNDS rounds of: submit DEPTH reads of 4 KiB
 * (one per block), then wait until all DEPTH have completed.
 *
 *   io_uring   liburing: io_uring_get_sqe + io_uring_prep_read per read,
 *              one io_uring_submit; one io_uring_wait_cqes for all DEPTH
 *   libaio     io_prep_pread per read, one io_submit; one io_getevents
 *              with min_nr = DEPTH
 *   posix      glibc: one aio_read per read; aio_error / aio_suspend until
 *              each is done, aio_return
 *
 * The file is opened with O_DIRECT where the file system allows it (so
 * libaio is really asynchronous); on tmpfs it falls back to buffered I/O.
 * Each library prints one line with the reads done, the bytes read and a
 * checksum of everything read, so a traced run can be compared with an
 * untraced one: nothing here depends on time.
 */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK 4096
#define MAX_DEPTH 64

static int rounds = 64, depth = 8;
static uint8_t *bufs[MAX_DEPTH];

struct result {
	long reads, bytes;
	uint64_t sum;
};

static void add(struct result *r, const uint8_t *buf, long n)
{
	r->reads++;
	r->bytes += n;
	for (long i = 0; i < n; i += 8) /* FNV-1a over every 8th byte */
		r->sum = (r->sum ^ buf[i]) * 0x100000001b3ull;
}

static int run_uring(int fd, struct result *r)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int ret = io_uring_queue_init(depth, &ring, 0);

	if (ret < 0) {
		fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-ret));
		return -1;
	}
	for (int k = 0; k < rounds; k++) {
		for (int i = 0; i < depth; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			io_uring_prep_read(sqe, fd, bufs[i], BLOCK, (uint64_t)i * BLOCK);
			io_uring_sqe_set_data64(sqe, (uint64_t)i);
		}
		ret = io_uring_submit(&ring);
		if (ret != depth) {
			fprintf(stderr, "io_uring_submit: %d\n", ret);
			break;
		}
		ret = io_uring_wait_cqes(&ring, &cqe, depth, NULL, NULL);
		if (ret < 0) {
			fprintf(stderr, "io_uring_wait_cqes: %s\n", strerror(-ret));
			break;
		}
		/* completions arrive in any order: account them by block */
		long got[MAX_DEPTH];
		for (int i = 0; i < depth; i++) {
			io_uring_peek_cqe(&ring, &cqe);
			got[cqe->user_data] = cqe->res;
			io_uring_cqe_seen(&ring, cqe);
		}
		for (int i = 0; i < depth; i++)
			add(r, bufs[i], got[i]);
	}
	io_uring_queue_exit(&ring);
	return ret < 0 ? -1 : 0;
}

static int run_libaio(int fd, struct result *r)
{
	io_context_t ctx = 0;
	struct iocb cbs[MAX_DEPTH], *cbp[MAX_DEPTH];
	struct io_event ev[MAX_DEPTH];
	int ret = io_setup(depth, &ctx);

	if (ret < 0) {
		fprintf(stderr, "io_setup: %s\n", strerror(-ret));
		return -1;
	}
	for (int k = 0; k < rounds; k++) {
		for (int i = 0; i < depth; i++) {
			io_prep_pread(&cbs[i], fd, bufs[i], BLOCK, (long long)i * BLOCK);
			cbp[i] = &cbs[i];
		}
		ret = io_submit(ctx, depth, cbp);
		if (ret != depth) {
			fprintf(stderr, "io_submit: %d\n", ret);
			break;
		}
		ret = io_getevents(ctx, depth, depth, ev, NULL);
		if (ret != depth) {
			fprintf(stderr, "io_getevents: %d\n", ret);
			break;
		}
		long got[MAX_DEPTH];
		for (int i = 0; i < depth; i++)
			got[(struct iocb *)ev[i].obj - cbs] = (long)ev[i].res;
		for (int i = 0; i < depth; i++)
			add(r, bufs[i], got[i]);
	}
	io_destroy(ctx);
	return ret < 0 ? -1 : 0;
}

static int run_posix(int fd, struct result *r)
{
	struct aiocb cbs[MAX_DEPTH];

	for (int k = 0; k < rounds; k++) {
		for (int i = 0; i < depth; i++) {
			memset(&cbs[i], 0, sizeof(cbs[i]));
			cbs[i].aio_fildes = fd;
			cbs[i].aio_buf = bufs[i];
			cbs[i].aio_nbytes = BLOCK;
			cbs[i].aio_offset = (off_t)i * BLOCK;
			if (aio_read(&cbs[i])) {
				perror("aio_read");
				return -1;
			}
		}
		for (int i = 0; i < depth; i++) {
			const struct aiocb *one[1] = {&cbs[i]};
			while (aio_error(&cbs[i]) == EINPROGRESS)
				aio_suspend(one, 1, NULL);
			ssize_t n = aio_return(&cbs[i]);
			if (n < 0) {
				fprintf(stderr, "aio_return: %s\n", strerror(aio_error(&cbs[i])));
				return -1;
			}
			add(r, bufs[i], n);
		}
	}
	return 0;
}

static int make_file(const char *path)
{
	uint8_t *block = bufs[0];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0) {
		perror(path);
		return -1;
	}
	for (int i = 0; i < depth; i++) {
		for (int j = 0; j < BLOCK; j++)
			block[j] = (uint8_t)(i * 7 + j * 13);
		if (pwrite(fd, block, BLOCK, (off_t)i * BLOCK) != BLOCK) {
			perror("pwrite");
			close(fd);
			return -1;
		}
	}
	fsync(fd);
	close(fd);
	fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0 && errno == EINVAL) /* tmpfs has no O_DIRECT */
		fd = open(path, O_RDONLY);
	if (fd < 0)
		perror(path);
	return fd;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(int fd, struct result *r);
	} libs[] = {{"io_uring", run_uring}, {"libaio", run_libaio}, {"posix", run_posix}};
	char tmp[] = "/tmp/aio-example-XXXXXX";
	const char *path = argc > 3 ? argv[3] : NULL;
	int status = 0;

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		depth = atoi(argv[2]);
	if (rounds < 1 || depth < 1 || depth > MAX_DEPTH) {
		fprintf(stderr, "usage: aio [ROUNDS [DEPTH (1-%d) [FILE]]]\n", MAX_DEPTH);
		return 2;
	}
	for (int i = 0; i < depth; i++)
		if (posix_memalign((void **)&bufs[i], BLOCK, BLOCK))
			return 1;
	if (!path) {
		int t = mkstemp(tmp);
		if (t < 0) {
			perror("mkstemp");
			return 1;
		}
		close(t);
		path = tmp;
	}
	int fd = make_file(path);
	if (fd < 0)
		return 1;
	for (size_t l = 0; l < sizeof(libs) / sizeof(libs[0]); l++) {
		struct result r = {0, 0, 0xcbf29ce484222325ull};
		if (libs[l].run(fd, &r)) {
			status = 1;
			continue;
		}
		printf("%-8s %ld reads, %ld bytes, checksum %016llx\n", libs[l].name, r.reads, r.bytes,
		       (unsigned long long)r.sum);
	}
	close(fd);
	if (path == tmp)
		unlink(tmp);
	return status;
}
