/* progress.c — see progress.h. */
#include "cli/progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/render/size.h"
#include "cli/render/strbuf.h"
#include "codec/helpers.h"

#define BAR_WIDTH 30
#define UNKNOWN_STEP ((int64_t)64 << 20) /* bytes between redraws when the total is unknown */
#define MIN_INTERVAL_NS 100000000        /* 0.1 s */

static xc_progress *on_screen; /* the line drawn last, for xc_progress_erase */

void xc_progress_init(xc_progress *p, const char *label, const char *unit, int64_t total,
                      bool to_stdout) {
  memset(p, 0, sizeof *p);
  p->on = isatty(STDERR_FILENO) == 1 && !(to_stdout && isatty(STDOUT_FILENO) == 1);
  p->label = label;
  p->unit = unit;
  p->total = total > 0 ? total : -1;
  p->last_step = -1;
}

static void amount(xs *line, const xc_progress *p, int64_t n) {
  if (strcmp(p->unit, "bytes") == 0)
    xc_human_size(line, n);
  else
    xs_printf(line, "%lld", (long long)n);
}

static void draw(const xc_progress *p, int64_t done) {
  xs line;
  xs_init(&line, NULL);
  xs_printf(&line, "\r%s ", p->label);
  if (p->total > 0) {
    int64_t percent = done >= p->total ? 100 : done * 100 / p->total;
    xs_putc(&line, '[');
    for (int i = 0; i < BAR_WIDTH; i++) xs_putc(&line, i < percent * BAR_WIDTH / 100 ? '#' : '.');
    xs_printf(&line, "] %3lld%%  ", (long long)percent);
  }
  amount(&line, p, done);
  if (p->total > 0) {
    xs_puts(&line, " of ");
    amount(&line, p, p->total);
  }
  if (strcmp(p->unit, "bytes") != 0) xs_printf(&line, " %s", p->unit);
  xs_puts(&line, "\033[K"); /* clear what a longer line left */
  if (!xs_failed(&line)) fputs(xs_cstr(&line), stderr);
  fflush(stderr);
  xs_free(&line);
}

void xc_progress_update(xc_progress *p, int64_t done) {
  if (!p->on) return;
  int64_t step =
      p->total > 0 ? (done >= p->total ? 100 : done * 100 / p->total) : done / UNKNOWN_STEP;
  if (step == p->last_step) return;
  int64_t t = monotonic_ns();
  if (p->drawn && t - p->last_ns < MIN_INTERVAL_NS && step < 100) return;
  p->last_step = step;
  p->last_ns = t;
  p->drawn = true;
  on_screen = p;
  draw(p, done);
}

void xc_progress_blocks(xc_progress *p, const xchg_shuffle_reader *reader) {
  xchg_shuffle_reader_metrics m;
  xchg_shuffle_reader_get_metrics(reader, &m);
  xc_progress_update(p, m.wire_bytes);
}

void xc_progress_end(xc_progress *p) {
  if (!p->drawn) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  p->drawn = false;
  on_screen = NULL;
}

void xc_progress_erase(void) {
  if (on_screen != NULL) xc_progress_end(on_screen);
}
