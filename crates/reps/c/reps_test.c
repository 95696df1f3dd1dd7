/*
 * Exercises every function declared in include/reps.h against the Rust static
 * library. Built and run by tests/c_api.rs; prints "reps C API: OK" on success.
 */
#include "reps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                          \
        }                                                                        \
    } while (0)

/* Scripted random source: the EV for evs_size 256 is word >> 24. */
struct script {
    const uint32_t *words;
    size_t len;
    size_t next;
    unsigned calls;
};

static uint32_t script_rng(void *context) {
    struct script *s = (struct script *)context;
    s->calls++;
    if (s->next >= s->len) return 0;
    return s->words[s->next++];
}

int main(void) {
    /* Layout agreement. */
    CHECK(sizeof(reps_state) == REPS_STATE_SIZE);
    CHECK(reps_state_size() == sizeof(reps_state));
    CHECK(_Alignof(reps_state) == 1);
    CHECK(sizeof(reps_config) == 16);

    /* Configuration. */
    reps_config cfg;
    memset(&cfg, 0xAB, sizeof cfg);
    reps_config_init(&cfg, 256);
    CHECK(cfg.evs_size == 256);
    CHECK(cfg.freeze_duration == 10000000u);
    CHECK(cfg.explore_packets == 100);
    CHECK(cfg.explore_mode == REPS_EXPLORE_REFERENCE);
    CHECK(cfg.coalescing == REPS_COALESCING_PER_ACK);
    CHECK(cfg.freezing_enabled == 1);
    CHECK(cfg.reserved[0] == 0 && cfg.reserved[1] == 0);
    CHECK(reps_config_validate(&cfg) == REPS_CONFIG_OK);
    CHECK(reps_config_validate(NULL) == REPS_CONFIG_NULL);
    {
        reps_config bad = cfg;
        bad.evs_size = 0;
        CHECK(reps_config_validate(&bad) == REPS_CONFIG_BAD_EVS_SIZE);
        bad = cfg;
        bad.evs_size = REPS_MAX_EVS_SIZE + 1;
        CHECK(reps_config_validate(&bad) == REPS_CONFIG_BAD_EVS_SIZE);
        bad = cfg;
        bad.freeze_duration = 0x80000000u;
        CHECK(reps_config_validate(&bad) == REPS_CONFIG_BAD_FREEZE_DURATION);
        bad = cfg;
        bad.coalescing = REPS_COALESCING_REUSE_EVS;
        bad.reuse_max_uses = 0;
        CHECK(reps_config_validate(&bad) == REPS_CONFIG_BAD_REUSE_MAX_USES);
        bad.reuse_max_uses = REPS_MAX_REUSE_USES;
        CHECK(reps_config_validate(&bad) == REPS_CONFIG_OK);
        bad.explore_mode = 7;
        CHECK(reps_config_validate(&bad) == REPS_CONFIG_BAD_ENUM);
    }
    cfg.freeze_duration = 500;
    cfg.explore_packets = 2;

    /* The crate-level worked example, through the C API. */
    const uint32_t words[] = {7u << 24, 42u << 24, 99u << 24, 11u << 24, 12u << 24};
    struct script rng = {words, 5, 0, 0};
    reps_state st;
    memset(&st, 0xFF, sizeof st);
    reps_init(&st);
    CHECK(!reps_is_frozen(&st));
    CHECK(reps_valid_count(&st) == 0);
    CHECK(reps_cached_count(&st) == 0);
    CHECK(reps_explore_remaining(&st) == 0);

    CHECK(reps_next_ev(&st, &cfg, script_rng, &rng) == 7);
    CHECK(reps_next_ev(&st, &cfg, script_rng, &rng) == 42);
    CHECK(reps_on_ack(&st, &cfg, 7, false, 100) == REPS_TRANSITION_NONE);
    CHECK(reps_on_ack(&st, &cfg, 42, true, 110) == REPS_TRANSITION_NONE);
    CHECK(reps_valid_count(&st) == 1);
    CHECK(reps_cached_count(&st) == 1);
    CHECK(reps_next_ev(&st, &cfg, script_rng, &rng) == 7);
    CHECK(reps_next_ev(&st, &cfg, script_rng, &rng) == 99);

    uint32_t until = 0;
    CHECK(!reps_freezing_until(&st, &until));
    CHECK(reps_on_failure_detected(&st, &cfg, 1000) == REPS_TRANSITION_ENTERED_FREEZING);
    CHECK(reps_on_failure_detected(&st, &cfg, 1001) == REPS_TRANSITION_NONE);
    CHECK(reps_is_frozen(&st));
    CHECK(reps_freezing_until(&st, &until) && until == 1500);
    CHECK(reps_freezing_until(&st, NULL));

    unsigned calls_before = rng.calls;
    CHECK(reps_next_ev(&st, &cfg, script_rng, &rng) == 7);
    CHECK(reps_next_ev_with_random(&st, &cfg, 0xFFFFFFFFu) == 7); /* frozen: no random */
    CHECK(reps_on_ack(&st, &cfg, 99, false, 1200) == REPS_TRANSITION_NONE);
    CHECK(reps_next_ev(&st, &cfg, script_rng, &rng) == 7);
    CHECK(reps_next_ev(&st, &cfg, script_rng, &rng) == 99);
    CHECK(rng.calls == calls_before);
    CHECK(reps_on_nack(&st, &cfg, 99, 1500) == REPS_TRANSITION_NONE); /* not after deadline */
    CHECK(reps_is_frozen(&st));

    CHECK(reps_on_ack(&st, &cfg, 5, false, 1600) == REPS_TRANSITION_EXITED_FREEZING);
    CHECK(!reps_is_frozen(&st));
    CHECK(reps_explore_remaining(&st) == 2);
    CHECK(reps_next_ev(&st, &cfg, script_rng, &rng) == 11);
    CHECK(reps_next_ev_with_random(&st, &cfg, 200u << 24) == 200);
    CHECK(reps_explore_remaining(&st) == 0);
    CHECK(reps_next_ev(&st, &cfg, script_rng, &rng) == 5);

    /* NACKs never cache; they can end freezing. */
    reps_init(&st);
    CHECK(reps_on_nack(&st, &cfg, 3, 0) == REPS_TRANSITION_NONE);
    CHECK(reps_cached_count(&st) == 0);
    CHECK(reps_on_failure_detected(&st, &cfg, 0) == REPS_TRANSITION_ENTERED_FREEZING);
    CHECK(reps_on_nack(&st, &cfg, 3, 501) == REPS_TRANSITION_EXITED_FREEZING);
    CHECK(reps_cached_count(&st) == 0);

    /* Coalesced ACKs: Carry EVs caches all, per-ACK only the last. */
    const reps_ev list[] = {21, 22, 23};
    reps_init(&st);
    CHECK(reps_on_coalesced_ack(&st, &cfg, list, 3, false, 0) == REPS_TRANSITION_NONE);
    CHECK(reps_valid_count(&st) == 1);
    CHECK(reps_next_ev_with_random(&st, &cfg, 0) == 23);
    reps_config carry = cfg;
    carry.coalescing = REPS_COALESCING_CARRY_EVS;
    reps_init(&st);
    CHECK(reps_on_coalesced_ack(&st, &carry, list, 3, false, 0) == REPS_TRANSITION_NONE);
    CHECK(reps_on_coalesced_ack(&st, &carry, list, 3, true, 0) == REPS_TRANSITION_NONE);
    CHECK(reps_on_coalesced_ack(&st, &carry, NULL, 5, false, 0) == REPS_TRANSITION_NONE);
    CHECK(reps_valid_count(&st) == 3);
    CHECK(reps_next_ev_with_random(&st, &carry, 0) == 21);
    CHECK(reps_next_ev_with_random(&st, &carry, 0) == 22);
    CHECK(reps_next_ev_with_random(&st, &carry, 0) == 23);

    /* Reuse EVs: each cached EV serves reuse_max_uses sends. */
    reps_config reuse = cfg;
    reuse.coalescing = REPS_COALESCING_REUSE_EVS;
    reuse.reuse_max_uses = 2;
    reps_init(&st);
    reps_on_ack(&st, &reuse, 30, false, 0);
    CHECK(reps_next_ev_with_random(&st, &reuse, 0) == 30);
    CHECK(reps_next_ev_with_random(&st, &reuse, 0) == 30);
    CHECK(reps_next_ev_with_random(&st, &reuse, 1u << 24) == 1);

    /* Paper exploration: with 9 exploration sends and a full cache, sends 1 and 9 random. */
    reps_config paper = cfg;
    paper.explore_mode = REPS_EXPLORE_PAPER_PSEUDOCODE;
    paper.explore_packets = 9;
    reps_init(&st);
    reps_on_failure_detected(&st, &paper, 0);
    reps_on_nack(&st, &paper, 0, 501);
    for (reps_ev ev = 100; ev < 108; ev++) reps_on_ack(&st, &paper, ev, false, 502);
    CHECK(reps_next_ev_with_random(&st, &paper, 250u << 24) == 250);
    for (reps_ev ev = 100; ev < 107; ev++) CHECK(reps_next_ev_with_random(&st, &paper, 0) == ev);
    CHECK(reps_next_ev_with_random(&st, &paper, 251u << 24) == 251);
    CHECK(reps_explore_remaining(&st) == 0);
    CHECK(reps_next_ev_with_random(&st, &paper, 0) == 107);

    /* Freezing disabled. */
    reps_config nofreeze = cfg;
    nofreeze.freezing_enabled = 0;
    reps_init(&st);
    CHECK(reps_on_failure_detected(&st, &nofreeze, 0) == REPS_TRANSITION_NONE);

    /* Every EV is below evs_size, through a null rng too. */
    reps_config small = cfg;
    small.evs_size = 32;
    reps_init(&st);
    for (uint32_t i = 0; i < 1000; i++) {
        CHECK(reps_next_ev_with_random(&st, &small, i * 2654435761u) < 32);
    }
    CHECK(reps_next_ev(&st, &small, NULL, NULL) == 0);

    /* NULL tolerance. */
    reps_init(NULL);
    reps_config_init(NULL, 1);
    CHECK(reps_next_ev(NULL, &cfg, script_rng, &rng) == 0);
    CHECK(reps_next_ev_with_random(&st, NULL, 5) == 0);
    CHECK(reps_on_ack(NULL, &cfg, 1, false, 0) == REPS_TRANSITION_NONE);
    CHECK(reps_on_coalesced_ack(NULL, &cfg, list, 3, false, 0) == REPS_TRANSITION_NONE);
    CHECK(reps_on_nack(NULL, &cfg, 1, 0) == REPS_TRANSITION_NONE);
    CHECK(reps_on_failure_detected(NULL, &cfg, 0) == REPS_TRANSITION_NONE);
    CHECK(!reps_is_frozen(NULL));
    CHECK(reps_valid_count(NULL) == 0);
    CHECK(reps_cached_count(NULL) == 0);
    CHECK(reps_explore_remaining(NULL) == 0);
    CHECK(!reps_freezing_until(NULL, &until));

    if (failures != 0) {
        fprintf(stderr, "reps C API: %d check(s) failed\n", failures);
        return 1;
    }
    printf("reps C API: OK\n");
    return 0;
}
