#!/usr/bin/env bash
# Looks at the pkgdown site in .build/site (`make site-check`, after `make
# site`) in a real browser: every image an article or the home page refers to
# must exist and be a non-empty PNG/SVG/JPEG, and headless Chromium takes a
# screenshot of the home page, the article index and every article into
# .build/site-shots/ (open them to see that the figures render). Installs
# Debian's chromium first when it is missing (as root, through apt-get);
# does nothing more when it is there.
set -euo pipefail
cd "$(dirname "$0")/.."
site=.build/site
shots=.build/site-shots
[ -f "$site/index.html" ] || { echo "site-check: no $site/index.html; run make site first" >&2; exit 1; }

browser=""
for b in chromium chromium-browser; do
  if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if [ -z "$browser" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "site-check: installing chromium (Debian)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; }
    browser=chromium
  else
    echo "site-check: chromium is not installed (apt-get install chromium, as root)" >&2
    exit 1
  fi
fi

mkdir -p "$shots"
fail=0
pages=("$site/index.html" "$site/articles/index.html" "$site/news/index.html")
for f in "$site"/articles/*.html; do
  [ "$(basename "$f")" = index.html ] || pages+=("$f")
done

for page in "${pages[@]}"; do
  [ -f "$page" ] || { echo "site-check: missing $page"; fail=1; continue; }
  dir=$(dirname "$page")
  n_img=0
  # every <img src="..."> that is a file of the site must be there and not empty
  while IFS= read -r src; do
    case "$src" in http*|data:*|"") continue ;; esac
    n_img=$((n_img + 1))
    file="$dir/$src"
    if [ ! -s "$file" ]; then
      echo "site-check: $page: image $src is missing or empty"; fail=1
    elif ! file -b "$file" | grep -Eq 'PNG|SVG|JPEG|GIF'; then
      echo "site-check: $page: image $src is not an image ($(file -b "$file"))"; fail=1
    fi
  done < <(grep -o '<img[^>]*src="[^"]*"' "$page" | sed 's/.*src="\([^"]*\)"/\1/')
  rel=${page#"$site"/}
  name=$(echo "${rel%.html}" | tr '/' '-')
  out="$PWD/$shots/$name.png"
  rm -f "$out"
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --screenshot="$out" --window-size=1280,2000 "file://$PWD/$page" >/dev/null 2>&1 || true
  if [ -s "$out" ]; then
    echo "site-check: $rel: $n_img images, screenshot $shots/$name.png"
  else
    echo "site-check: $rel: no screenshot"; fail=1
  fi
  # one more screenshot per figure, of a copy of the page from which
  # everything before that figure is removed (a headless screenshot is of the
  # top of a page), so that each figure is seen where and as it renders
  for k in $(seq 1 "$n_img"); do
    copy="$dir/.site-check-$k.html"
    cat > "$dir/.site-check.js" <<'JS'
document.addEventListener('DOMContentLoaded', function () {
  var im = Array.from(document.querySelectorAll('main img')).filter(function (i) {
    var s = i.getAttribute('src') || '';
    return s !== '' && !/^(http|data:)/.test(s);
  })[SITE_CHECK_FIGURE - 1];
  for (var n = im; n && n.id !== 'main'; n = n.parentElement) {
    while (n.previousElementSibling) n.previousElementSibling.remove();
  }
});
JS
    sed "s|</head>|<script>var SITE_CHECK_FIGURE = $k;</script><script src=\".site-check.js\"></script></head>|" \
      "$page" > "$copy"
    sout="$PWD/$shots/$name--fig$k.png"
    rm -f "$sout"
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
      --screenshot="$sout" --window-size=1280,1400 "file://$PWD/$copy" >/dev/null 2>&1 || true
    rm -f "$copy" "$dir/.site-check.js"
    if [ -s "$sout" ]; then
      echo "site-check: $rel figure $k: screenshot $shots/$name--fig$k.png"
    else
      echo "site-check: $rel figure $k: no screenshot"; fail=1
    fi
  done
done
exit $fail
