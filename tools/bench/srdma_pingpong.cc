// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// srdma_pingpong: where a small RDMA WRITE's latency goes, on any device.
//
//   srdma_pingpong DEVICE GID_INDEX [ITERATIONS]
//
// Two RC QPs of DEVICE, connected to each other through its GID
// GID_INDEX, each driven by a thread pinned to its own CPU (0 and 1):
//
//   thread A (CPU 0)                         thread B (CPU 1)
//   QP a --- 2-byte WRITE into B's buffer --> QP b
//        <-- 2-byte WRITE into A's buffer ---
//
// It prints two measurements, three runs each:
//
//   one-sided  thread A alone posts a signaled WRITE and polls its CQ
//              until the completion, ITERATIONS times: the cost of one
//              message with its ACK on the posting CPU, and the part of
//              it spent inside ibv_post_send() (for a software device,
//              the doorbell and whatever the driver runs within it)
//   ping-pong  ib_write_lat's loop: each side waits for the peer's byte,
//              then posts its own WRITE and polls its completion; the
//              one-way latency (half a round trip) and the time each
//              side spent inside ibv_post_send() per message
//
// A one-way latency below the time inside ibv_post_send() means the data
// reached the peer, and the peer answered, before the posting call
// returned: what comes after the data is placed (the ACK, the completion)
// is then off the critical path. Not a test: it asserts nothing.

#include <infiniband/verbs.h>
#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const char *what)
{
	std::perror(what);
	std::exit(1);
}

struct Side {
	ibv_cq *cq = nullptr;
	ibv_qp *qp = nullptr;
	ibv_mr *mr = nullptr;
	char *buf = nullptr;
	Side *peer = nullptr;
	int cpu = 0;
	bool first = false;
	// Per message, from the last run.
	double post_ns = 0;
};

// The byte at this offset of a side's buffer is what the peer writes.
constexpr size_t kPollOffset = 64;
constexpr size_t kBufSize = 4096;

void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// One side's loop; with @pingpong, waits for the peer's byte each time.
void run(Side *s, int iters, bool pingpong)
{
	ibv_sge sge{reinterpret_cast<uintptr_t>(s->buf), 2, s->mr->lkey};
	ibv_send_wr wr{};
	ibv_send_wr *bad;
	ibv_wc wc;
	Clock::duration in_post{};
	volatile char *poll = s->buf + kPollOffset;

	pin(s->cpu);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr =
		reinterpret_cast<uintptr_t>(s->peer->buf + kPollOffset);
	wr.wr.rdma.rkey = s->peer->mr->rkey;
	for (int i = 1; i <= iters; i++) {
		if (pingpong && !(s->first && i == 1)) {
			char want = static_cast<char>(s->first ? i - 1 : i);

			while (*poll != want)
				;
		}
		s->buf[0] = static_cast<char>(i);
		auto t0 = Clock::now();
		if (ibv_post_send(s->qp, &wr, &bad))
			die("ibv_post_send");
		in_post += Clock::now() - t0;
		int n;
		while (!(n = ibv_poll_cq(s->cq, 1, &wc)))
			;
		if (n < 0 || wc.status != IBV_WC_SUCCESS) {
			std::fprintf(stderr, "completion: %s\n",
				     ibv_wc_status_str(wc.status));
			std::exit(1);
		}
	}
	s->post_ns = std::chrono::duration<double, std::nano>(in_post).count() /
		     iters;
}

void setup(ibv_context *ctx, ibv_pd *pd, Side *s)
{
	ibv_qp_init_attr ia{};
	ibv_qp_attr a{};

	s->cq = ibv_create_cq(ctx, 64, nullptr, nullptr, 0);
	if (!s->cq)
		die("ibv_create_cq");
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.qp_type = IBV_QPT_RC;
	s->qp = ibv_create_qp(pd, &ia);
	if (!s->qp)
		die("ibv_create_qp");
	s->buf = static_cast<char *>(std::aligned_alloc(kBufSize, kBufSize));
	std::memset(s->buf, 0, kBufSize);
	s->mr = ibv_reg_mr(pd, s->buf, kBufSize,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr)
		die("ibv_reg_mr");
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify to INIT");
}

void connect(ibv_context *ctx, int gid_index, Side *s)
{
	ibv_qp_attr a{};
	union ibv_gid gid;

	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		die("ibv_query_gid");
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = s->peer->qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		die("modify to RTR");
	a = {};
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify to RTS");
}

double since_ns(Clock::time_point t0)
{
	return std::chrono::duration<double, std::nano>(Clock::now() - t0)
		.count();
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 3) {
		std::fprintf(stderr,
			     "usage: %s DEVICE GID_INDEX [ITERATIONS]\n",
			     argv[0]);
		return 2;
	}
	const std::string name = argv[1];
	const int gid_index = std::atoi(argv[2]);
	const int iters = argc > 3 ? std::atoi(argv[3]) : 20000;
	int num;
	ibv_device **list = ibv_get_device_list(&num);
	ibv_device *dev = nullptr;

	for (int i = 0; list && i < num; i++)
		if (name == ibv_get_device_name(list[i]))
			dev = list[i];
	if (!dev) {
		std::fprintf(stderr, "no device %s\n", name.c_str());
		return 1;
	}
	ibv_context *ctx = ibv_open_device(dev);
	if (!ctx)
		die("ibv_open_device");
	ibv_pd *pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd");
	Side a, b;

	a.cpu = 0;
	a.first = true;
	b.cpu = 1;
	a.peer = &b;
	b.peer = &a;
	setup(ctx, pd, &a);
	setup(ctx, pd, &b);
	connect(ctx, gid_index, &a);
	connect(ctx, gid_index, &b);

	for (int r = 0; r < 3; r++) {
		auto t0 = Clock::now();

		run(&a, iters, false);
		std::printf("%s one-sided: %.0f ns per message, %.0f ns in ibv_post_send\n",
			    name.c_str(), since_ns(t0) / iters, a.post_ns);
	}
	for (int r = 0; r < 3; r++) {
		std::memset(a.buf, 0, kBufSize);
		std::memset(b.buf, 0, kBufSize);
		auto t0 = Clock::now();
		std::thread tb(run, &b, iters, true);
		std::thread ta(run, &a, iters, true);

		ta.join();
		tb.join();
		std::printf("%s ping-pong: one-way %.0f ns, %.0f and %.0f ns in ibv_post_send\n",
			    name.c_str(), since_ns(t0) / iters / 2, a.post_ns,
			    b.post_ns);
	}
	ibv_free_device_list(list);
	return 0;
}
