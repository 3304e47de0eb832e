% Octave oracle: bwlabeln against voxlabel's labels written by label_oracle_gen.
% usage: octave-cli --no-gui -q label_oracle.m DIR
% matlab order  <-> bwlabeln on V(y,x,z) (volumes stacked from dicomread slices)
% matlab-xy     <-> bwlabeln on V(x,y,z) (raster order)
% conn 4/8 on one-slice volumes <-> bwlabeln with 6/18 (Octave's 2-D bwlabel does not follow MATLAB's order).
pkg load image
args = argv();
dir = args{1};
fid = fopen(fullfile(dir, 'manifest.txt'));
entries = textscan(fid, '%s %d %d %d');
fclose(fid);
names = entries{1}; W = entries{2}; H = entries{3}; D = entries{4};
checked = 0; failed = 0;
function v = read_raw(path, type, n)
  fid = fopen(path, 'rb'); v = fread(fid, n, [type '=>' type]); fclose(fid);
end
for k = 1:numel(names)
  w = double(W(k)); h = double(H(k)); d = double(D(k)); n = w * h * d;
  base = fullfile(dir, names{k});
  raw = reshape(read_raw([base '.mask'], 'uint8', n), [w h d]) ~= 0;   % raw(x,y,z)
  image = permute(raw, [2 1 3]);                                         % image(y,x,z)
  cases = {6, 'matlab'; 18, 'matlab'; 26, 'matlab'; 6, 'xy'; 18, 'xy'; 26, 'xy'};
  if d == 1
    cases(end+1, :) = {4, 'matlab'};
    cases(end+1, :) = {8, 'matlab'};
  end
  for c = 1:rows(cases)
    conn = cases{c, 1}; order = cases{c, 2};
    ours = reshape(read_raw(sprintf('%s.c%d.%s', base, conn, order), 'uint32', n), [w h d]);
    oracle_conn = conn; if conn == 4, oracle_conn = 6; elseif conn == 8, oracle_conn = 18; end
    if strcmp(order, 'matlab')
      expected = permute(bwlabeln(image, oracle_conn), [2 1 3]);
    else
      expected = bwlabeln(raw, oracle_conn);
    end
    checked++;
    if ~isequal(double(ours), expected)
      failed++;
      printf('MISMATCH %s (%dx%dx%d) conn %d order %s: %d voxels differ\n', names{k}, w, h, d, conn, order, ...
             nnz(double(ours) ~= expected));
    end
  end
end
printf('octave bwlabeln oracle: %d volumes, %d label files compared, %d mismatches\n', numel(names), checked, failed);
if failed > 0
  error('bwlabeln oracle: %d of %d label files differ', failed, checked);
end
