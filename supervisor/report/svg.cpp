#include "report/svg.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/text.h"

namespace mlsup::report {
namespace {

// The picture's geometry, in pixels.
constexpr double kWidth = 960, kLeft = 170, kRight = 20, kTop = 30, kLane = 26, kBar = 14, kChart = 180, kGap = 50;
constexpr double kPlot = kWidth - kLeft - kRight;

// The colour of an ending: a table from the ending's kind to a fill.
struct Shade {
  const char* kind;
  const char* fill;
};
constexpr Shade kShades[] = {{"failure", "#c62828"}, {"completed", "#2e7d32"}, {"open", "#1565c0"}, {"other", "#8d8d8d"}};

// An ending's kind: a failure, the completion, still open, or another ending (a time limit, a preemption, a stop).
const char* kind_of(const AttemptFacts& a) {
  if (a.failure) return "failure";
  if (a.open) return "open";
  return a.ending == "completed" ? "completed" : "other";
}

const char* fill_of(const char* kind) {
  for (const auto& s : kShades)
    if (std::string_view(s.kind) == kind) return s.fill;
  return "#000";
}

// The colours the step lines take, run after run.
constexpr const char* kLines[] = {"#1565c0", "#ef6c00", "#6a1b9a", "#00838f", "#ad1457", "#558b2f", "#4e342e"};

// Wall time and step to pixels.
struct Scale {
  Window w;
  long long top_step = 1;
  double chart_top = 0;
  double x(double t) const {
    const double span = std::max(1.0, w.until - w.since);
    return kLeft + kPlot * (std::clamp(t, w.since, w.until) - w.since) / span;
  }
  double y(long long step) const {
    return chart_top + kChart - kChart * static_cast<double>(step) / static_cast<double>(top_step);
  }
};

std::string num(double v) { return decimal(v, 1); }
std::string attr(std::string_view s) { return escape_xml(s); }

// The data attributes every mark of an attempt carries.
std::string attempt_data(const RunFacts& r, const AttemptFacts& a) {
  return fmt::format(
      R"( data-run="{}" data-attempt="{}" data-job="{}" data-start="{}" data-end="{}" data-ending="{}" data-action="{}" )"
      R"(data-from-step="{}" data-step="{}" data-kept="{}" data-lost="{}" data-failure="{}" data-open="{}")",
      attr(r.run), a.number, a.job_id ? std::to_string(*a.job_id) : "", decimal(a.start), decimal(a.end), attr(a.ending),
      attr(a.action), a.from_step, a.to_step, a.kept, decimal(a.lost), a.failure ? "true" : "false", a.open ? "true" : "false");
}

// An attempt's bar in its lane, with a cross at its end when it failed.
std::string attempt_marks(const RunFacts& r, const AttemptFacts& a, double lane_y, const Scale& s) {
  const double x0 = s.x(a.start), x1 = std::max(s.x(a.end), x0 + 2), y = lane_y + (kLane - kBar) / 2;
  const char* kind = kind_of(a);
  std::string title = "attempt " + std::to_string(a.number) + (a.job_id ? ", job " + std::to_string(*a.job_id) : "") +
                      ": " + a.ending + ", steps " + std::to_string(a.from_step) + "-" + std::to_string(a.to_step);
  std::string out = fmt::format(R"(<rect class="attempt {}"{} x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect>)",
                                kind, attempt_data(r, a), num(x0), num(y), num(x1 - x0), num(kBar), fill_of(kind), attr(title)) + "\n";
  if (a.failure) {
    const double cx = x1, cy = lane_y + kLane / 2, d = 5;
    out += fmt::format(R"(<path class="failure"{} d="M{} {}L{} {}M{} {}L{} {}" stroke="#000" stroke-width="2"/>)",
                       attempt_data(r, a), num(cx - d), num(cy - d), num(cx + d), num(cy + d), num(cx - d), num(cy + d),
                       num(cx + d), num(cy - d)) + "\n";
  }
  return out;
}

// A node exclusion as a diamond above its run's lane, at the time it was recorded.
std::string exclusion_mark(const RunFacts& r, const ExclusionFacts& e, double lane_y, const Scale& s) {
  const double cx = s.x(e.since), cy = lane_y + 3, d = 4;
  return fmt::format(R"(<path class="exclusion" data-run="{}" data-node="{}" data-attempt="{}" data-time="{}" data-until="{}" )"
                     R"(data-reason="{}" d="M{} {}L{} {}L{} {}L{} {}Z" fill="#f9a825" stroke="#000"><title>{} excluded: {}</title></path>)",
                     attr(r.run), attr(e.node), e.attempt > 0 ? std::to_string(e.attempt) : "", decimal(e.since),
                     decimal(e.until), attr(e.reason), num(cx), num(cy - d), num(cx + d), num(cy), num(cx), num(cy + d),
                     num(cx - d), num(cy), attr(e.node), attr(e.reason)) + "\n";
}

// The stretch of time the picture spans: the attempts and exclusions within the window, with a margin of a
// twentieth each side (at least a minute), kept within the window; the whole window when nothing happened in it.
Window view_of(const Report& r) {
  double first = r.window.until, last = r.window.since;
  const auto take = [&](double t) {
    t = std::clamp(t, r.window.since, r.window.until);
    first = std::min(first, t), last = std::max(last, t);
  };
  for (const auto& run : r.runs) {
    for (const auto& a : run.attempts) take(a.start), take(a.end);
    for (const auto& e : run.exclusions) take(e.since);
  }
  if (first > last) return r.window;
  const double margin = std::max(60.0, (last - first) / 20);
  return {std::max(r.window.since, first - margin), std::min(r.window.until, last + margin)};
}

// The window's edges where the picture reaches them: a dashed line at each, over the lanes and the chart.
std::string window_edges(const Window& w, const Scale& s, double y0, double y1) {
  std::string out;
  for (const double t : {w.since, w.until})
    if (t >= s.w.since && t <= s.w.until && s.w.until > s.w.since)
      out += fmt::format(R"(<line class="window-edge" data-time="{0}" x1="{1}" y1="{2}" x2="{1}" y2="{3}" stroke="#999" )"
                         R"(stroke-dasharray="4 3"/>)",
                         decimal(t), num(s.x(t)), num(y0), num(y1)) + "\n";
  return out;
}

// The spacing of the time axis's ticks: the smallest of a table that leaves at most 8 ticks.
double tick_spacing(double span) {
  constexpr double kSteps[] = {60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 604800};
  for (const double s : kSteps)
    if (span / s <= 8) return s;
  return std::ceil(span / 8 / 604800) * 604800;
}

// The time axis under the lanes: a line, and a tick with its UTC time at each spacing.
std::string time_axis(const Scale& s, double y) {
  std::string out = fmt::format(R"(<line class="axis" x1="{}" y1="{}" x2="{}" y2="{}" stroke="#444"/>)", num(kLeft), num(y),
                                num(kLeft + kPlot), num(y)) + "\n";
  const double step = tick_spacing(s.w.until - s.w.since);
  for (double t = std::ceil(s.w.since / step) * step; t <= s.w.until; t += step)
    out += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#444"/><text x="{0}" y="{3}" text-anchor="middle">{4}</text>)",
                       num(s.x(t)), num(y), num(y + 4), num(y + 16), utc_clock(t)) + "\n";
  return out;
}

// One run's steps against wall time: a line through each attempt's start (its resume step) and end (the step it
// reached), with a dot at each.
std::string progress(const RunFacts& r, const char* colour, const Scale& s) {
  std::string points, dots;
  for (const auto& a : r.attempts) {
    const std::pair<double, long long> ends[] = {{a.start, a.from_step}, {a.end, a.to_step}};
    for (const auto& [t, step] : ends) {
      points += num(s.x(t)) + "," + num(s.y(step)) + " ";
      dots += fmt::format(R"(<circle class="step" data-run="{}" data-attempt="{}" data-time="{}" data-step="{}" cx="{}" cy="{}" r="3" fill="{}"/>)",
                          attr(r.run), a.number, decimal(t), step, num(s.x(t)), num(s.y(step)), colour) + "\n";
    }
  }
  if (points.empty()) return "";
  points.pop_back();
  return fmt::format(R"(<polyline class="progress" data-run="{}" points="{}" fill="none" stroke="{}" stroke-width="2"/>)",
                     attr(r.run), points, colour) + "\n" + dots;
}

// The legend of the endings' colours and of the marks, on one line at y.
std::string legend(double y) {
  std::string out;
  double x = kLeft;
  for (const auto& shade : kShades) {
    out += fmt::format(R"(<rect x="{}" y="{}" width="12" height="10" fill="{}"/><text x="{}" y="{}">{}</text>)", num(x), num(y - 9),
                       shade.fill, num(x + 16), num(y), shade.kind) + "\n";
    x += 100;
  }
  return out + fmt::format(R"(<text x="{}" y="{}">&#215; failure   &#9670; node excluded</text>)", num(x), num(y)) + "\n";
}

}  // namespace

std::string render_svg(const Report& r, bool standalone) {
  Scale s{.w = view_of(r)};
  for (const auto& run : r.runs)
    for (const auto& a : run.attempts) s.top_step = std::max(s.top_step, a.to_step);
  const double lanes_end = kTop + kLane * static_cast<double>(r.runs.size());
  s.chart_top = lanes_end + kGap;
  const double height = s.chart_top + kChart + 50;
  std::string out = standalone ? "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" : "";
  out += fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" class="mlsup-timeline" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
                     R"(font-family="sans-serif" font-size="11" data-since="{2}" data-until="{3}" data-view-since="{4}" )"
                     R"(data-view-until="{5}">)",
                     num(kWidth), num(height), decimal(r.window.since), decimal(r.window.until), decimal(s.w.since),
                     decimal(s.w.until)) + "\n";
  out += fmt::format(R"(<text x="{}" y="16" font-weight="bold">Attempts, {} to {} (UTC)</text>)", num(kLeft),
                     utc_time(s.w.since), utc_time(s.w.until)) + "\n";
  out += fmt::format(R"(<text class="window" x="{}" y="16" text-anchor="end">report window {} to {}</text>)",
                     num(kLeft + kPlot), utc_time(r.window.since), utc_time(r.window.until)) + "\n";
  out += window_edges(r.window, s, kTop, s.chart_top + kChart);
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    const auto& run = r.runs[i];
    const double y = kTop + kLane * static_cast<double>(i);
    out += fmt::format(R"(<g class="lane" data-run="{}"><text x="{}" y="{}" text-anchor="end">{}</text>)", attr(run.run),
                       num(kLeft - 8), num(y + kLane / 2 + 4), attr(run.run)) + "\n";
    for (const auto& a : run.attempts) out += attempt_marks(run, a, y, s);
    for (const auto& e : run.exclusions) out += exclusion_mark(run, e, y, s);
    out += "</g>\n";
  }
  out += time_axis(s, lanes_end + 4);
  out += fmt::format(R"(<text x="{}" y="{}" font-weight="bold">Steps against wall time</text>)", num(kLeft), num(s.chart_top - 8)) + "\n";
  out += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#444"/><text x="{3}" y="{1}" text-anchor="end">{4}</text>)"
                     R"(<text x="{3}" y="{2}" text-anchor="end">0</text>)",
                     num(kLeft), num(s.chart_top), num(s.chart_top + kChart), num(kLeft - 6), s.top_step) + "\n";
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    const char* colour = kLines[i % std::size(kLines)];
    out += progress(r.runs[i], colour, s);
    out += fmt::format(R"(<text x="{}" y="{}" fill="{}">{}</text>)", num(kLeft - 8 - 150), num(s.chart_top + 14 * (static_cast<double>(i) + 1)),
                       colour, attr(r.runs[i].run)) + "\n";
  }
  out += time_axis(s, s.chart_top + kChart);
  out += legend(height - 10);
  return out + "</svg>\n";
}

}  // namespace mlsup::report
