#!/usr/bin/env bash
# Makes the release commit's actions name the release, so a tag's actions are that release and no
# other: action.yml's `image: Dockerfile` becomes `image: docker://IMAGE@sha256:…` (the image by
# digest: `uses: cdkbot/cdkbot@vX.Y.Z` pulls exactly the image that release built and signed,
# whatever later happens to the image's tags), and setup/action.yml's `version` input defaults to
# VERSION instead of latest (`uses: cdkbot/cdkbot/setup@vX.Y.Z` installs vX.Y.Z). Run by
# scripts/release.sh on the commit it tags; main keeps building the Dockerfile (the dogfood
# workflow tests it) and installing the latest release.
# Usage: scripts/release-action.sh VERSION IMAGE@sha256:DIGEST [DIR]   (DIR: the checkout, default this one)
set -euo pipefail
version=${1:?usage: release-action.sh VERSION IMAGE@sha256:DIGEST [DIR]}
image=${2:?usage: release-action.sh VERSION IMAGE@sha256:DIGEST [DIR]}
dir=${3:-"$(dirname "$0")/.."}
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]] || { echo "version $version is not 1.2.3" >&2; exit 2; }
[[ "$image" =~ ^[a-z0-9][a-z0-9.:/_-]*@sha256:[0-9a-f]{64}$ ]] || { echo "image $image is not IMAGE@sha256:DIGEST" >&2; exit 2; }
action=$dir/action.yml setup=$dir/setup/action.yml
n=$(grep -c '^  image: Dockerfile$' "$action" || true)
[ "$n" = 1 ] || { echo "$action: expected one 'image: Dockerfile' line under runs:, found $n" >&2; exit 1; }
# The version input's default: the first `default: latest` after `  version:` under inputs.
n=$(awk '/^inputs:/{i=1} /^[a-z]/ && !/^inputs:/{i=0} i && /^  version:/{v=1; next} i && /^  [a-z]/{v=0}
  v && /^    default: latest$/{n++} END{print n+0}' "$setup")
[ "$n" = 1 ] || { echo "$setup: expected 'default: latest' under the version input, found $n" >&2; exit 1; }
sed -i.bak "s|^  image: Dockerfile\$|  image: docker://$image # v$version|" "$action"
awk -v v="$version" '/^inputs:/{i=1} /^[a-z]/ && !/^inputs:/{i=0} i && /^  version:/{s=1} i && /^  [a-z]/ && !/^  version:/{s=0}
  s && /^    default: latest$/{print "    default: \"" v "\""; s=0; next} {print}' "$setup" >"$setup.new"
mv "$setup.new" "$setup"
rm -f "$action.bak"
