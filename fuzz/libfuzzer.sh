# libFuzzer's options for every run of a target, shared by fuzz/run.sh and
# fuzz/campaign.sh (sourced, from the repository root):
# -timeout: one input taking over 10 s is a failure (a hang);
# -rss_limit_mb / -malloc_limit_mb: over-allocation is a failure.
LIBFUZZER_OPTIONS=(
    -dict=fuzz/hrry.dict
    -timeout=10
    -rss_limit_mb=2048
    -malloc_limit_mb=1024
    -print_final_stats=1
)
