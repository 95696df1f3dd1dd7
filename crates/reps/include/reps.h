/*
 * reps.h - C interface of the `reps` crate (Recycled Entropy Packet Spraying).
 *
 * Hand-written to match crates/reps/src/ffi.rs; tests/c_api.rs compiles
 * c/reps_test.c against this header and the Rust static library, so any
 * drift in sizes, constants or signatures fails `cargo test -p reps`.
 *
 * Conventions
 *   - One `reps_state` (25 bytes, alignment 1) per connection; one
 *     `reps_config` shared by all connections that use the same parameters.
 *   - Time is a caller-chosen uint32_t tick counter that may wrap around;
 *     a freeze must be shorter than 2^31 ticks.
 *   - Functions accept NULL pointers: they then do nothing and return 0/false.
 *   - No function allocates, blocks, or uses floating point.
 *
 * See the crate documentation (lib.rs) for the algorithm and the byte layout.
 */
#ifndef REPS_H
#define REPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An entropy value (e.g. UDP source port) steering ECMP hashing. */
typedef uint16_t reps_ev;

/* explore_mode values. */
#define REPS_EXPLORE_REFERENCE 0        /* every exploration send is random */
#define REPS_EXPLORE_PAPER_PSEUDOCODE 1 /* Algorithm 2: 1 in 8 random, others cached */

/* coalescing values. */
#define REPS_COALESCING_PER_ACK 0   /* one EV per ACK, used once */
#define REPS_COALESCING_CARRY_EVS 1 /* coalesced ACK lists all un-marked EVs */
#define REPS_COALESCING_REUSE_EVS 2 /* each cached EV serves reuse_max_uses sends */

/* Transition codes returned by the feedback functions. */
#define REPS_TRANSITION_NONE 0
#define REPS_TRANSITION_ENTERED_FREEZING 1
#define REPS_TRANSITION_EXITED_FREEZING 2

/* reps_config_validate results. */
#define REPS_CONFIG_OK 0
#define REPS_CONFIG_BAD_EVS_SIZE 1        /* evs_size outside 1..65536 */
#define REPS_CONFIG_BAD_FREEZE_DURATION 2 /* freeze_duration above 2^31 - 1 */
#define REPS_CONFIG_BAD_REUSE_MAX_USES 3  /* reuse_max_uses outside 1..16 */
#define REPS_CONFIG_BAD_ENUM 4            /* unknown explore_mode / coalescing */
#define REPS_CONFIG_NULL 5                /* cfg is NULL */

/* Limits. */
#define REPS_BUFFER_SLOTS 8
#define REPS_MAX_EVS_SIZE 65536u
#define REPS_MAX_REUSE_USES 16
#define REPS_STATE_SIZE 25

/* Parameters (16 bytes). Fill with reps_config_init, then adjust. */
typedef struct reps_config {
    uint32_t evs_size;        /* number of EVs, 1..65536; EVs are < evs_size */
    uint32_t freeze_duration; /* ticks; default 10000000 (10 ms at 1 ns) */
    uint16_t explore_packets; /* sends explored after freezing: the BDP in packets */
    uint8_t explore_mode;     /* REPS_EXPLORE_* */
    uint8_t coalescing;       /* REPS_COALESCING_* */
    uint8_t reuse_max_uses;   /* used with REPS_COALESCING_REUSE_EVS */
    uint8_t freezing_enabled; /* non-zero: failures may enter freezing */
    uint8_t reserved[2];      /* keep zero */
} reps_config;

/*
 * Per-connection state (25 bytes, alignment 1). Treat as opaque; the fields
 * are listed only so that C can allocate it. Layout:
 *   cached_evs[2i], [2i+1]  slot i's EV, little-endian
 *   valid_bits              bit i: slot i valid
 *   ring_flags              bits 0-2 head, 3-6 valid count, 7 frozen
 *   explore_counter         uint16 little-endian
 *   freezing_until          uint32 little-endian deadline (meaningful if frozen)
 *   cursor_flags            bits 0-2 frozen cursor, 3 ring wrapped, 4-7 reuse count
 */
typedef struct reps_state {
    uint8_t cached_evs[16];
    uint8_t valid_bits;
    uint8_t ring_flags;
    uint8_t explore_counter[2];
    uint8_t freezing_until[4];
    uint8_t cursor_flags;
} reps_state;

/* Random source callback: returns a uniformly distributed 32-bit word. */
typedef uint32_t (*reps_rng_fn)(void *context);

/* sizeof(reps_state) as seen by Rust (25). */
size_t reps_state_size(void);

/* Fills *cfg with defaults for evs_size EVs (Reference, per-ACK, 10 ms, 100). */
void reps_config_init(reps_config *cfg, uint32_t evs_size);

/* Returns REPS_CONFIG_OK or a REPS_CONFIG_* error code. */
int32_t reps_config_validate(const reps_config *cfg);

/* Initialises a fresh connection (empty cache, not frozen, not exploring). */
void reps_init(reps_state *state);

/* EV for the next packet; calls rng(rng_context) when a random EV is needed. */
reps_ev reps_next_ev(reps_state *state, const reps_config *cfg, reps_rng_fn rng,
                     void *rng_context);

/* EV for the next packet; uses `random` when a random EV is needed. */
reps_ev reps_next_ev_with_random(reps_state *state, const reps_config *cfg, uint32_t random);

/* ACK carrying `ev`: cached unless ecn_marked; may end freezing. */
int32_t reps_on_ack(reps_state *state, const reps_config *cfg, reps_ev ev, bool ecn_marked,
                    uint32_t now);

/* Coalesced ACK carrying evs[0..len) (oldest first): Carry EVs caches all of them,
 * the other modes only the last; nothing when ecn_marked; may end freezing. */
int32_t reps_on_coalesced_ack(reps_state *state, const reps_config *cfg, const reps_ev *evs,
                              size_t len, bool ecn_marked, uint32_t now);

/* NACK for `ev`: never cached; may end freezing. */
int32_t reps_on_nack(reps_state *state, const reps_config *cfg, reps_ev ev, uint32_t now);

/* Caller-detected failure: enters freezing unless disabled, frozen or exploring. */
int32_t reps_on_failure_detected(reps_state *state, const reps_config *cfg, uint32_t now);

/* Whether the connection is frozen. */
bool reps_is_frozen(const reps_state *state);

/* Number of valid cached EVs (0..8). */
uint8_t reps_valid_count(const reps_state *state);

/* Number of slots written since the last wipe (0..8). */
uint8_t reps_cached_count(const reps_state *state);

/* Remaining exploration sends. */
uint16_t reps_explore_remaining(const reps_state *state);

/* If frozen: stores the deadline in *until (if not NULL) and returns true. */
bool reps_freezing_until(const reps_state *state, uint32_t *until);

#ifdef __cplusplus
}
#endif

#endif /* REPS_H */
