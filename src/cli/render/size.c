/* size.c — byte counts for people (size.h). */
#include "cli/render/size.h"

void xc_human_size(xs *out, int64_t bytes) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) {
    xs_printf(out, "%lld B", (long long)bytes);
    return;
  }
  double v = (double)bytes / 1024;
  int u = 0;
  while (v >= 1024 && u + 1 < (int)(sizeof units / sizeof units[0])) {
    v /= 1024;
    u++;
  }
  xs_printf(out, "%.*f %s (%lld B)", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u], (long long)bytes);
}

void xc_print_codec_bytes(xs *out, const xchg_istream *s) {
  xchg_istream_metrics m;
  xchg_istream_get_metrics(s, &m);
  xs_printf(out, "codec %s: ", xchg_stream_codec_name(xchg_istream_codec(s)));
  xc_human_size(out, m.compressed_bytes);
  xs_puts(out, " compressed, ");
  xc_human_size(out, m.decompressed_bytes);
  xs_puts(out, " decoded\n");
}
